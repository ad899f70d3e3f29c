// Package upstream is the upstream harness: a control plane on which the controllers Strata hands
// its objects to really run, so that tests see what they do with them rather than what their
// schemas allow. kube-apiserver and etcd (envtest), kube-controller-manager (claims bound, StatefulSets
// run, garbage collected), kube-scheduler (the real placement, spread and affinity included), KWOK
// (nodes and the pod lifecycle, with no kubelet), ECK and the Spark operator (each with its
// admission webhook, failure policy Fail), and Strata's manager built from cmd/manager, run as the
// chart's ServiceAccount with the chart's RBAC.
//
// What it cannot prove (docs/upstream.md): there is no Elasticsearch, Kafka or Spark process behind
// the pods, no DNS, and no kubelet; CheckReferences makes the one check a kubelet would make that
// KWOK does not (every Secret, ConfigMap, claim and ServiceAccount a pod names exists).
//
// The binaries come from hack/tools.sh (`hack/tools.sh upstream`, cached in bin/); the Spark
// operator's SPARK_HOME from jvm/spark-home (Maven Central's Spark jars). A test that finds a
// binary missing builds it, as envtest's tests do.
package upstream
