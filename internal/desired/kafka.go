package desired

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/strata-dev/strata/api/v1alpha1"
)

// Kafka builds p's Strimzi Kafka cluster (kafka.strimzi.io/v1). In Strimzi 1.x every cluster
// runs in KRaft mode on node pools: the Kafka object carries no replicas and no storage (those
// are on the KafkaNodePools from NodePools), and the strimzi.io/node-pools and strimzi.io/kraft
// annotations of the 0.3x/0.4x releases are ignored since 0.48, so none is set.
//
// The cluster gets:
//   - two internal listeners: plain on 9092, where clients authenticate with SCRAM-SHA-512 (the
//     Spark job, as its KafkaUser), and TLS on 9093 with client certificates (mTLS, for
//     producers given a KafkaUser of type tls); and simple authorization, so that each
//     principal gets only its KafkaUser's ACLs (Strimzi's own components are super users:
//     strimzi-kafka-operator 1.2.0, cluster-operator/src/main/java/io/strimzi/operator/
//     cluster/model/KafkaBrokerConfigurationBuilder.java, withAuthorization). See
//     docs/security.md;
//   - broker.rack from the nodes' spec.kafka.rackTopologyKey label, so that Kafka spreads a
//     partition's replicas over failure domains; none when the key is empty (rack awareness
//     off). Strimzi's brokers then need to read their node: Strimzi binds its
//     strimzi-kafka-broker ClusterRole (get nodes) to the brokers' ServiceAccount with a
//     ClusterRoleBinding of its own, which its installation lets it delegate
//     (strimzi-kafka-operator 1.2.0, cluster-operator/src/main/java/io/strimzi/operator/
//     cluster/model/KafkaCluster.java, generateClusterRoleBinding; packaging/install/
//     cluster-operator/030-ClusterRole-strimzi-kafka-broker.yaml);
//   - the plan's replication factor and min.insync.replicas as broker defaults, also for the
//     internal offsets and transaction topics, and no topic auto-creation: topics come from
//     KafkaTopic objects;
//   - Prometheus metrics through the JMX exporter, configured by KafkaMetricsConfigMap;
//   - the Topic Operator (KafkaTopic needs it), the User Operator (KafkaUser needs it) and the
//     Kafka Exporter (consumer lag);
//   - Cruise Control with the brokers' network capacity from the bandwidth model (without it
//     Cruise Control assumes about 10 MB/s per broker and drops its network goals) and CPU
//     from the plan's resources (without it, 1 core), and
//     auto-rebalancing when brokers are added or removed. Strimzi refuses Cruise Control on a
//     single-broker cluster, so a plan of one broker gets none once no broker is leaving.
func Kafka(in Inputs) *unstructured.Unstructured {
	p := in.Pipeline
	kafka := object{
		"listeners": []any{
			object{"name": "plain", "port": KafkaPlainPort, "type": "internal", "tls": false,
				"authentication": object{"type": "scram-sha-512"}},
			object{"name": "tls", "port": KafkaTLSPort, "type": "internal", "tls": true,
				"authentication": object{"type": "tls"}},
		},
		"authorization": object{"type": "simple"},
		"config":        kafkaConfig(in.Plan),
		"metricsConfig": object{
			"type": "jmxPrometheusExporter",
			"valueFrom": object{"configMapKeyRef": object{
				"name": KafkaMetricsConfigMapName(p),
				"key":  KafkaMetricsConfigKey,
			}},
		},
	}
	if key := rackTopologyKey(p); key != "" {
		kafka["rack"] = object{"topologyKey": key}
	}
	if p.Spec.Kafka.Version != "" {
		kafka["version"] = p.Spec.Kafka.Version
	}
	spec := object{
		"kafka": kafka,
		"entityOperator": object{"topicOperator": object{}, "userOperator": object{},
			"template": object{"pod": object{"metadata": podMetadata(p, WorkloadKafkaEntityOperator)}}},
		"kafkaExporter": object{"topicRegex": ".*", "groupRegex": ".*"},
	}
	if cc := cruiseControl(in); cc != nil {
		spec["cruiseControl"] = cc
	}
	return newObject(KafkaGVK, p, KafkaName(p), AppKafka, ComponentKafka, nil, nil, object{"spec": spec})
}

// kafkaConfig is the brokers' configuration that follows from the plan.
func kafkaConfig(plan v1alpha1.Plan) object {
	rf, minISR := replication(plan)
	return object{
		"default.replication.factor":               rf,
		"min.insync.replicas":                      minISR,
		"offsets.topic.replication.factor":         rf,
		"transaction.state.log.replication.factor": rf,
		"transaction.state.log.min.isr":            minISR,
		"auto.create.topics.enable":                false,
	}
}

// replication returns the plan's replication factor and min.insync.replicas, each at least 1
// and min.insync.replicas at most the replication factor (Kafka rejects more).
func replication(plan v1alpha1.Plan) (rf, minISR int64) {
	rf = max(int64(plan.ReplicationFactor), 1)
	minISR = min(max(int64(plan.MinInSyncReplicas), 1), rf)
	return rf, minISR
}

// cruiseControl is the Cruise Control section, or nil when the cluster runs none.
func cruiseControl(in Inputs) object {
	if !hasCruiseControl(in) {
		return nil
	}
	cc := object{
		"template": object{"pod": object{"metadata": podMetadata(in.Pipeline, WorkloadKafkaCruiseControl)}},
		"autoRebalance": []any{
			object{"mode": "add-brokers", "template": object{"name": RebalanceTemplateName(in.Pipeline)}},
			object{"mode": "remove-brokers", "template": object{"name": RebalanceTemplateName(in.Pipeline)}},
		},
	}
	capacity := object{}
	if link := in.Plan.LinkUsableBytesPerSecond; link > 0 {
		// Each broker has one link, used in both directions: its usable rate is the capacity
		// of each direction.
		capacity["inboundNetwork"] = NetworkCapacity(link)
		capacity["outboundNetwork"] = NetworkCapacity(link)
	}
	if r, ok := podResources(in.Plan, v1alpha1.RoleKafkaBroker); ok {
		// The brokers' planned CPU. Strimzi takes brokerCapacity.cpu first, then the pool's
		// CPU request, then its limit, and else 1 core (strimzi-kafka-operator 1.2.0,
		// cluster-operator/src/main/java/io/strimzi/operator/cluster/model/cruisecontrol/
		// CpuCapacity.java, processResourceCapacity); set here so that Cruise Control's CPU
		// goals, which are hard goals, plan with the cores the brokers have.
		capacity["cpu"] = r.CPU.String()
	}
	if len(capacity) > 0 {
		cc["brokerCapacity"] = capacity
	}
	return cc
}

// hasCruiseControl says whether the cluster runs Cruise Control (and so auto-rebalancing and
// its KafkaRebalance template): with two brokers or more. Strimzi refuses the whole Kafka when
// Cruise Control is asked for with fewer, counting the brokers the node pools ask for, not the
// ones still running: KafkaCluster.fromCrd passes that count to validateCruiseControl
// (strimzi-kafka-operator 1.2.0, cluster-operator/src/main/java/io/strimzi/operator/cluster/
// model/cruisecontrol/CruiseControlMetricsReporter.java), which throws InvalidResourceException
// "Cruise Control cannot be deployed with a Kafka cluster which has only one broker" before any
// scale-down is looked at. So the last broker but one is emptied first, while Cruise Control
// still runs (BrokerRemoval), and Cruise Control goes in the apply that lowers the pool to one
// broker: Strimzi's scale-down check then finds that broker empty.
func hasCruiseControl(in Inputs) bool { return in.Plan.Brokers >= 2 }

// NetworkCapacity formats a rate in bytes per second as Strimzi's brokerCapacity wants it
// (pattern ^[0-9]+([KMG]i?)?B/s$): whole KiB/s, rounded down so that Cruise Control never
// plans with more than the link carries. Strimzi converts the value to KiB/s for Cruise Control.
func NetworkCapacity(bytesPerSecond int64) string {
	return fmt.Sprintf("%dKiB/s", max(bytesPerSecond, 0)/1024)
}
