package desired

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// All returns every child object of the pipeline, in the order to apply them:
//   - the Kafka metrics ConfigMap and the rebalance template before the Kafka that names them
//     (Strimzi fails a reconcile whose ConfigMap is missing);
//   - the node pools before the Kafka (a KRaft cluster without pools does not start);
//   - the topic and the job's KafkaUser after their cluster;
//   - the job's Elasticsearch user and role Secrets before the Elasticsearch that names them
//     (ECK records a warning for a missing one), and Elasticsearch before the
//     SparkApplication, whose pods need ECK's CA Secret;
//   - the checkpoint claim (Strata's own job only) and elasticsearch-hadoop's secure settings
//     store (a job of the user's only) before the SparkApplication whose pods mount them;
//   - the driver's ServiceAccount and RoleBinding before the SparkApplication that runs as it
//     (unless spec.spark.serviceAccountName names the user's own), and the executor target its
//     driver reads (Strata's own job in the operator's image only).
//
// The rebalance template is left out when the plan runs no Cruise Control (a single broker);
// a controller that prunes children it no longer builds then deletes it.
func All(in Inputs) []*unstructured.Unstructured {
	objs := []*unstructured.Unstructured{KafkaMetricsConfigMap(in)}
	if t := RebalanceTemplate(in); t != nil {
		objs = append(objs, t)
	}
	if rb := BrokerRemoval(in); rb != nil {
		objs = append(objs, rb)
	}
	objs = append(objs, NodePools(in)...)
	objs = append(objs, Kafka(in), Topic(in), KafkaUser(in),
		ElasticsearchUserSecret(in), ElasticsearchRolesSecret(in), Elasticsearch(in))
	if ks := ElasticsearchKeystoreSecret(in); ks != nil {
		objs = append(objs, ks)
	}
	if c := CheckpointClaim(in); c != nil {
		objs = append(objs, c)
	}
	if sa := ServiceAccount(in); sa != nil {
		objs = append(objs, sa, RoleBinding(in))
	}
	if t := ExecutorTarget(in); t != nil {
		objs = append(objs, t)
	}
	return append(objs, SparkApplication(in))
}
