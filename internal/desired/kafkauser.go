package desired

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/strata-dev/strata/api/v1alpha1"
)

// KafkaUserGVK is the kind of the job's Kafka identity.
var KafkaUserGVK = schema.GroupVersionKind{Group: "kafka.strimzi.io", Version: "v1", Kind: "KafkaUser"}

// ComponentKafkaUser is the LabelComponent of the job's KafkaUser.
const ComponentKafkaUser = "kafka-user"

// The keys of the Secret the User Operator writes for a scram-sha-512 KafkaUser, named after
// the KafkaUser (no secretPrefix is configured): the generated password, and the JAAS line
// Kafka clients take as sasl.jaas.config (strimzi-kafka-operator 1.2.0,
// user-operator/src/main/java/io/strimzi/operator/user/model/KafkaUserModel.java: KEY_PASSWORD,
// KEY_SASL_JAAS_CONFIG, getSecretName).
const (
	KafkaUserPasswordKey = "password"
	KafkaUserJaasKey     = "sasl.jaas.config"
)

// KafkaSaslJaasEnv is the environment variable the driver and the executors get the JAAS line
// in (from the User Operator's Secret); the job's spark.strata.kafka.saslJaasConfigEnv names it.
const KafkaSaslJaasEnv = "KAFKA_SASL_JAAS_CONFIG"

// KafkaUserName is the name of p's job's KafkaUser, of the Kafka principal it authenticates as
// (User:<name>) and of the Secret the User Operator writes its credentials into.
func KafkaUserName(p *v1alpha1.AnalyticsPipeline) string { return p.Name + "-ingest" }

// ConsumerGroup is the consumer group the job commits its progress to: the pipeline's name
// (spark.strata.pipeline; the job's IngestConf.consumerGroup).
func ConsumerGroup(p *v1alpha1.AnalyticsPipeline) string { return p.Name }

// KafkaUser builds the KafkaUser (kafka.strimzi.io/v1) the pipeline's Spark job authenticates
// as on the plain listener (SCRAM-SHA-512; see Kafka), joined to its cluster by the
// strimzi.io/cluster label. The User Operator (enabled in the Kafka's entityOperator) creates
// the SCRAM credential in Kafka, writes the password into a Secret of the same name, and keeps
// the ACLs in Kafka equal to spec.authorization.acls (strimzi-kafka-operator 1.2.0,
// api/src/main/java/io/strimzi/api/kafka/model/user/KafkaUserSpec.java and
// acl/AclRule.java; the CRD is packaging/install/cluster-operator/044-Crd-kafkauser.yaml).
//
// The ACLs are exactly what the job does (jvm/ingest-job):
//   - the topic: Read (its Spark source fetches records) and Describe (the source's admin
//     client lists the partitions and their offsets: Metadata and ListOffsets);
//   - the consumer group named after the pipeline: Read, for the offsets it commits after each
//     batch with Admin.alterConsumerGroupOffsets (OffsetCommit needs Read on the group and on
//     the topic), and Describe. Spark's own consumers read by assignment, with offsets from the
//     checkpoint, and join no group.
//
// Nothing else: the job creates no topic (KafkaTopic does), writes nothing to Kafka and reads
// no cluster configuration.
func KafkaUser(in Inputs) *unstructured.Unstructured {
	p := in.Pipeline
	acl := func(resourceType, name string, ops ...any) object {
		return object{
			"type":       "allow",
			"resource":   object{"type": resourceType, "name": name, "patternType": "literal"},
			"operations": ops,
			"host":       "*",
		}
	}
	return newObject(KafkaUserGVK, p, KafkaUserName(p), AppKafka, ComponentKafkaUser,
		map[string]string{StrimziClusterLabel: KafkaName(p)}, nil, object{"spec": object{
			"authentication": object{"type": "scram-sha-512"},
			"authorization": object{
				"type": "simple",
				"acls": []any{
					acl("topic", TopicName(p), "Read", "Describe"),
					acl("group", ConsumerGroup(p), "Read", "Describe"),
				},
			},
		}})
}
