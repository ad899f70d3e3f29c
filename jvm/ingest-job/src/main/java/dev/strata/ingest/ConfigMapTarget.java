package dev.strata.ingest;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import java.util.Map;

/**
 * The executor target as the operator publishes it: the key {@value #KEY} of a ConfigMap in the
 * driver's namespace, read through the API server as the driver's ServiceAccount (which Strata's
 * strata-spark-driver role lets get ConfigMaps, as Spark's driver needs for its own).
 *
 * <p>Read through the API, not a mounted volume: the kubelet refreshes a mounted ConfigMap only on
 * its periodic sync (a minute or more), as long as the resubmission this avoids. The client is the
 * one Spark's Kubernetes scheduler uses (fabric8, in the image's jars); it finds the API server and
 * the token as in any pod, or from KUBECONFIG outside one.
 */
final class ConfigMapTarget implements ExecutorScaler.Source, AutoCloseable {
  /** The data key holding the target. */
  static final String KEY = "executors";

  private final KubernetesClient client;
  private final String namespace;
  private final String name;

  /**
   * Reads ConfigMap name in namespace (null: the client's, the pod's own namespace in a cluster).
   */
  ConfigMapTarget(String namespace, String name) {
    this.client = new KubernetesClientBuilder().build();
    this.namespace = namespace != null ? namespace : client.getNamespace();
    this.name = name;
  }

  @Override
  public String read() {
    ConfigMap cm = client.configMaps().inNamespace(namespace).withName(name).get();
    return value(cm == null ? null : cm.getData());
  }

  /** The target in a ConfigMap's data, or null when there is none. */
  static String value(Map<String, String> data) {
    return data == null ? null : data.get(KEY);
  }

  @Override
  public String describe() {
    return "ConfigMap " + namespace + "/" + name + " (key " + KEY + ")";
  }

  @Override
  public void close() {
    client.close();
  }
}
