package dev.strata.lab;

import io.prometheus.jmx.JmxCollector;
import io.prometheus.metrics.exporter.httpserver.HTTPServer;
import io.prometheus.metrics.instrumentation.jvm.JvmMetrics;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.File;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Properties;
import kafka.server.KafkaConfig;
import kafka.server.KafkaRaftServer;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.metadata.storage.Formatter;
import org.apache.kafka.server.common.MetadataVersion;

/**
 * One Kafka KRaft node and, in the same JVM, the JMX exporter's collector serving /metrics.
 *
 * <p>The exporter part does what the exporter's Java agent does at startup (jmx_exporter 1.6.0,
 * jmx_prometheus_javaagent/src/main/java/io/prometheus/jmx/JavaAgent.java, start()): it touches
 * the platform MBean server first, registers the JVM metrics (the rules do not set
 * excludeJvmMetrics), registers a {@code JmxCollector} in AGENT mode on the default registry, and
 * serves that registry over HTTP on all addresses at the given port. Strimzi 1.2.0 starts the agent
 * the same way in every Kafka pod (docker-images/kafka-based/kafka/scripts/kafka_run.sh:
 * -javaagent:jmx_prometheus_javaagent.jar=9404:custom-config/metrics-config.json), with the
 * rules of the Kafka resource's metricsConfig ConfigMap, which the Go side writes here unchanged.
 * Only the agent's build-info gauge (jmx_exporter_build_info) is missing: the agent's class is not
 * in the collector's jar.
 *
 * <p>The log directory is formatted as kafka-storage.sh format does (Kafka 4.3's StorageTool
 * runs the same Formatter), once: a restarted node keeps its data, as a pod's volume does.
 */
final class Broker {
  private Broker() {}

  static void main(String[] args) throws Exception {
    if (args.length != 4) {
      throw new IllegalArgumentException("broker <server.properties> <cluster id> <metrics port> <metrics rules>");
    }
    Properties props = new Properties();
    try (InputStream in = Files.newInputStream(Path.of(args[0]))) {
      props.load(in);
    }
    String clusterId = args[1];
    int metricsPort = Integer.parseInt(args[2]);
    File rules = new File(args[3]);

    ManagementFactory.getPlatformMBeanServer();
    PrometheusRegistry registry = PrometheusRegistry.defaultRegistry;
    JvmMetrics.builder().register(registry);
    new JmxCollector(rules, JmxCollector.Mode.AGENT).register(registry);
    HTTPServer http = HTTPServer.builder().port(metricsPort).registry(registry).buildAndStart();

    KafkaConfig config = KafkaConfig.fromProps(props);
    String logDir = props.getProperty("log.dirs");
    if (!Files.exists(Path.of(logDir, "meta.properties"))) {
      new Formatter()
          .setPrintStream(new PrintStream(OutputStream.nullOutputStream()))
          .setNodeId(config.nodeId())
          .setClusterId(clusterId)
          .setControllerListenerName(props.getProperty("controller.listener.names"))
          .setMetadataLogDirectory(logDir)
          .setDirectories(List.of(logDir))
          .setReleaseVersion(MetadataVersion.LATEST_PRODUCTION)
          .run();
    }
    KafkaRaftServer server = new KafkaRaftServer(config, Time.SYSTEM);
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      server.shutdown();
      server.awaitShutdown();
      http.close();
    }, "lab-shutdown"));
    server.startup();
    System.out.println("lab: broker " + config.nodeId() + " started, metrics on :" + metricsPort);
    server.awaitShutdown();
  }
}
