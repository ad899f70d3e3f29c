package desired

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	"github.com/strata-dev/strata/api/v1alpha1"
)

// Inputs is everything a builder reads: the pipeline (its spec, name, namespace and UID) and the
// plan computed for it. Builders never read the pipeline's status; the plan is passed in so that
// a plan not yet written to status (a dry run, the CLI) builds the same objects.
type Inputs struct {
	Pipeline *v1alpha1.AnalyticsPipeline
	Plan     v1alpha1.Plan
	// EmptyBrokers are brokers to empty now, with a remove-brokers KafkaRebalance, before the
	// broker pool is lowered: the last broker but one, whose partitions must be moved off while
	// the cluster still has two brokers and Cruise Control (see BrokerRemoval).
	EmptyBrokers []int32
	// RefreshRemoval: the KafkaRebalance emptying EmptyBrokers ended without moving the replicas
	// (NotReady, Stopped) long enough ago to ask Strimzi to try again (BrokerRemoval).
	RefreshRemoval bool
	// ElasticsearchPassword is the password of the job's Elasticsearch user: read from its
	// Secret, or generated once by the controller when the Secret does not exist yet; empty
	// (a dry run, `strata plan`): the Secret is built without one.
	ElasticsearchPassword string
	// IngestImage is Strata's job image, for pipelines that name none (the manager's
	// --ingest-image); empty: DefaultIngestImage.
	IngestImage string
	// SubmittedExecutors is spec.executor.instances of the SparkApplication that exists now, for
	// a job that changes its executors in place to keep (ExecutorTarget); 0: the plan's count (no
	// SparkApplication yet, or one that changes anyway and is submitted again).
	SubmittedExecutors int32
	// Tiers are the StorageTiers the pipeline names, as the plan was computed on: the pods
	// whose volumes are on a local one get node affinity to its nodes (placement.go). A tier
	// missing here gives none.
	Tiers []v1alpha1.StorageTier
}

// The kinds this package builds.
var (
	ConfigMapGVK        = schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
	KafkaGVK            = schema.GroupVersionKind{Group: "kafka.strimzi.io", Version: "v1", Kind: "Kafka"}
	KafkaNodePoolGVK    = schema.GroupVersionKind{Group: "kafka.strimzi.io", Version: "v1", Kind: "KafkaNodePool"}
	KafkaTopicGVK       = schema.GroupVersionKind{Group: "kafka.strimzi.io", Version: "v1", Kind: "KafkaTopic"}
	KafkaRebalanceGVK   = schema.GroupVersionKind{Group: "kafka.strimzi.io", Version: "v1", Kind: "KafkaRebalance"}
	SparkApplicationGVK = schema.GroupVersionKind{Group: "sparkoperator.k8s.io", Version: "v1beta2", Kind: "SparkApplication"}
	ElasticsearchGVK    = schema.GroupVersionKind{Group: "elasticsearch.k8s.elastic.co", Version: "v1", Kind: "Elasticsearch"}
)

// Label keys set on every child object.
const (
	LabelName      = "app.kubernetes.io/name"
	LabelInstance  = "app.kubernetes.io/instance"
	LabelComponent = "app.kubernetes.io/component"
	LabelPartOf    = "app.kubernetes.io/part-of"
	LabelManagedBy = "app.kubernetes.io/managed-by"
	// StrimziClusterLabel joins node pools and topics to their Kafka cluster.
	StrimziClusterLabel = "strimzi.io/cluster"
	// StrimziPoolLabel is the label Strimzi gives a node pool's pods, naming the pool.
	StrimziPoolLabel = "strimzi.io/pool-name"
	// LabelPipeline and LabelWorkload are on every pod the upstream operators make for a
	// pipeline (PodLabels): the pipeline's name, and which of its workloads the pod runs. The
	// operator finds a pipeline's pods by them alone (controllers/pipeline/pipeline_scheduling.go), with a
	// cache that holds no other pod. Strata's own keys, not app.kubernetes.io/*: Strimzi gives
	// its pods app.kubernetes.io/instance and managed-by of its own, which a template's labels
	// would override (PodLabels).
	LabelPipeline = "strata.dev/pipeline"
	LabelWorkload = "strata.dev/workload"
	// HostnameTopologyKey is the well-known node label that names each node.
	HostnameTopologyKey = "kubernetes.io/hostname"

	// PartOf and ManagedBy are the values of LabelPartOf and LabelManagedBy.
	PartOf    = "strata"
	ManagedBy = "strata"
)

// Values of LabelName.
const (
	AppKafka         = "kafka"
	AppSpark         = "spark"
	AppElasticsearch = "elasticsearch"
)

// Values of LabelComponent.
const (
	ComponentKafka           = "kafka"
	ComponentKafkaBroker     = "kafka-broker"
	ComponentKafkaController = "kafka-controller"
	ComponentKafkaMetrics    = "kafka-metrics"
	ComponentKafkaRebalance  = "kafka-rebalance"
	ComponentTopic           = "topic"
	ComponentSpark           = "spark"
	ComponentElasticsearch   = "elasticsearch"
)

// Values of LabelWorkload: the child, and the part of it, a pod belongs to.
const (
	WorkloadElasticsearchMaster = "elasticsearch-master"
	WorkloadElasticsearchData   = "elasticsearch-data"
	WorkloadKafkaController     = ComponentKafkaController
	WorkloadKafkaBroker         = ComponentKafkaBroker
	WorkloadKafkaEntityOperator = "kafka-entity-operator"
	WorkloadKafkaCruiseControl  = "kafka-cruise-control"
	WorkloadSparkDriver         = "spark-driver"
	WorkloadSparkExecutor       = "spark-executor"
)

// Defaults of the API, mirrored so that a pipeline that never went through the API server (a
// test, `strata plan -f`) builds the same children as a defaulted one.
const (
	DefaultSparkVersion = "4.0.2" // the job image's Spark (jvm/Dockerfile: FROM apache/spark:4.0.2)
	// DefaultFSGroup is the group of the apache/spark images' user (uid and gid 185: apache/spark
	// v4.0.2, resource-managers/kubernetes/docker/src/main/dockerfiles/spark/Dockerfile,
	// ARG spark_uid=185).
	DefaultFSGroup = 185
	// DefaultVirtualMemory is spec.elasticsearch.virtualMemory's default.
	DefaultVirtualMemory = "MMapOff"
	DefaultESVersion     = "8.19.0"
	DefaultESMasterNodes = 3
	ReclaimRetain        = "Retain"
	ReclaimDelete        = "Delete"
)

// Labels returns the labels of a child object of p: app (LabelName) and component vary per
// object, instance is the pipeline's name.
func Labels(p *v1alpha1.AnalyticsPipeline, app, component string) map[string]string {
	return map[string]string{
		LabelName:      app,
		LabelInstance:  p.Name,
		LabelComponent: component,
		LabelPartOf:    PartOf,
		LabelManagedBy: ManagedBy,
	}
}

// SelectorLabels are the labels that select every child of p, whatever its kind.
func SelectorLabels(p *v1alpha1.AnalyticsPipeline) map[string]string {
	return map[string]string{LabelInstance: p.Name, LabelManagedBy: ManagedBy}
}

// PodLabels are the labels of the pods an upstream operator makes for p's workload, set in the
// pod template of the child that describes them. Each operator copies them onto its pods:
//   - ECK: nodeSets[].podTemplate.metadata.labels, the base its builder merges its own labels
//     into without overriding any (cloud-on-k8s 3.5.0, pkg/controller/elasticsearch/nodespec/
//     podspec.go, BuildPodTemplateSpec; pkg/controller/common/defaults/pod_template.go,
//     WithLabels: MergePreservingExistingKeys);
//   - Strimzi: template.pod.metadata.labels of a KafkaNodePool, and of the Kafka's
//     entityOperator and cruiseControl, added after its own labels (strimzi-kafka-operator
//     1.2.0, cluster-operator/src/main/java/io/strimzi/operator/cluster/model/WorkloadUtils.java,
//     createStatefulPod and createPodTemplateSpec: labels.withAdditionalLabels(
//     TemplateUtils.labels(template))). The Kafka's own labels reach its pods only filtered: its
//     STRIMZI_LABELS_EXCLUSION_PATTERN drops app.kubernetes.io/* but part-of (operator-common/
//     .../model/Labels.java, fromResource); keys under strimzi.io/ are refused in a template
//     (Labels.additionalLabels), which these are not;
//   - the Spark operator: driver.labels and executor.labels, passed to spark-submit as
//     spark.kubernetes.{driver,executor}.label.* (kubeflow/spark-operator v2.5.2,
//     internal/controller/sparkapplication/submission.go, driverConfOption and
//     executorConfOption, which also pass the SparkApplication's own labels), which Spark sets
//     on the pods.
func PodLabels(p *v1alpha1.AnalyticsPipeline, workload string) map[string]string {
	return map[string]string{LabelPipeline: p.Name, LabelWorkload: workload}
}

// podMetadata is a pod template's metadata carrying PodLabels.
func podMetadata(p *v1alpha1.AnalyticsPipeline, workload string) object {
	return object{"labels": PodLabels(p, workload)}
}

// OwnerReference makes p the controller of a child, so that deleting the pipeline deletes its
// children and a child's events requeue the pipeline.
func OwnerReference(p *v1alpha1.AnalyticsPipeline) metav1.OwnerReference {
	return metav1.OwnerReference{
		APIVersion:         v1alpha1.GroupVersion.String(),
		Kind:               "AnalyticsPipeline",
		Name:               p.Name,
		UID:                p.UID,
		Controller:         ptr.To(true),
		BlockOwnerDeletion: ptr.To(true),
	}
}

// object is a JSON object under construction.
type object = map[string]any

// newObject returns a namespaced child of p of kind gvk, with the standard labels (plus extra)
// and p as its controller; body holds the top-level fields besides apiVersion, kind and
// metadata (spec, data …). Values are normalised to the types unstructured objects hold (int64,
// []any, map[string]any), so that callers may use int32, []string and map[string]string.
func newObject(gvk schema.GroupVersionKind, p *v1alpha1.AnalyticsPipeline, name, app, component string,
	extra map[string]string, annotations map[string]string, body object) *unstructured.Unstructured {
	labels := Labels(p, app, component)
	for k, v := range extra {
		labels[k] = v
	}
	owner := OwnerReference(p)
	meta := object{
		"name":      name,
		"namespace": p.Namespace,
		"labels":    labels,
		"ownerReferences": []any{object{
			"apiVersion":         owner.APIVersion,
			"kind":               owner.Kind,
			"name":               owner.Name,
			"uid":                string(owner.UID),
			"controller":         true,
			"blockOwnerDeletion": true,
		}},
	}
	if len(annotations) > 0 {
		meta["annotations"] = annotations
	}
	raw := object{"apiVersion": gvk.GroupVersion().String(), "kind": gvk.Kind, "metadata": meta}
	for k, v := range body {
		raw[k] = v
	}
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&raw)
	if err != nil {
		// Only a programming error (a value JSON cannot hold) gets here; the tests build
		// every object.
		panic(fmt.Sprintf("desired: building %s %s: %v", gvk.Kind, name, err))
	}
	return &unstructured.Unstructured{Object: content}
}

// placement returns the plan's placement of role, if the plan has one.
func placement(plan v1alpha1.Plan, role string) (v1alpha1.StoragePlacement, bool) {
	for _, s := range plan.Storage {
		if s.Role == role {
			return s, true
		}
	}
	return v1alpha1.StoragePlacement{}, false
}

// rackTopologyKey is the node label naming p's failure domains; empty when spec.kafka.
// rackTopologyKey is set empty, which turns rack awareness off (the API server defaults an
// absent key to kubernetes.io/hostname, so only an explicit "" reaches here empty).
func rackTopologyKey(p *v1alpha1.AnalyticsPipeline) string { return p.Spec.Kafka.RackTopologyKey }

// deleteVolumes says whether p's Kafka and Elasticsearch volumes go with it
// (spec.volumeReclaimPolicy: Delete); the default, Retain, keeps them.
func deleteVolumes(p *v1alpha1.AnalyticsPipeline) bool {
	return p.Spec.VolumeReclaimPolicy == ReclaimDelete
}

// Fixed names and ports of the children.
const (

	// KafkaPlainPort and KafkaTLSPort are the internal listeners' ports.
	KafkaPlainPort = 9092
	KafkaTLSPort   = 9093
	// KafkaMetricsConfigKey is the key of the JMX exporter rules in the metrics ConfigMap.
	KafkaMetricsConfigKey = "kafka-metrics-config.yml"

	// ElasticsearchPort is the port of the Elasticsearch HTTP service (TLS, ECK's default).
	ElasticsearchPort = 9200
	// ElasticsearchCAKey is the CA certificate's key in ElasticsearchCASecret.
	ElasticsearchCAKey = "ca.crt"
	// ElasticsearchDataVolume is the claim name ECK mounts as Elasticsearch's data directory.
	ElasticsearchDataVolume = "elasticsearch-data"
)

// KafkaName is the name of p's Strimzi Kafka cluster.
func KafkaName(p *v1alpha1.AnalyticsPipeline) string { return p.Name }

// ControllerPoolName and BrokerPoolName name p's KafkaNodePools. Pools are namespaced objects
// joined to their cluster by a label, so two pipelines in one namespace need pool names of their
// own: they start with the pipeline's name. Strimzi names pods <cluster>-<pool>-<node id>, which
// must fit a 63-character hostname: hence the API's limit on pipeline names.
func ControllerPoolName(p *v1alpha1.AnalyticsPipeline) string { return p.Name + "-controller" }

// BrokerPoolName names p's broker KafkaNodePool; see ControllerPoolName.
func BrokerPoolName(p *v1alpha1.AnalyticsPipeline) string { return p.Name + "-broker" }

// BrokerPodPrefix is the name prefix of p's broker pods (then the node ID).
func BrokerPodPrefix(p *v1alpha1.AnalyticsPipeline) string {
	return KafkaName(p) + "-" + BrokerPoolName(p) + "-"
}

// KafkaTopicName is the name of p's KafkaTopic object (not the topic: see TopicName).
func KafkaTopicName(p *v1alpha1.AnalyticsPipeline) string { return p.Name }

// TopicName is the Kafka topic the producers write and the job reads: spec.kafka.topic.name,
// else the pipeline's name.
func TopicName(p *v1alpha1.AnalyticsPipeline) string {
	if p.Spec.Kafka.Topic.Name != "" {
		return p.Spec.Kafka.Topic.Name
	}
	return p.Name
}

// KafkaMetricsConfigMapName is the ConfigMap holding the brokers' JMX exporter rules.
func KafkaMetricsConfigMapName(p *v1alpha1.AnalyticsPipeline) string {
	return KafkaName(p) + "-kafka-metrics"
}

// RebalanceTemplateName is the KafkaRebalance that configures auto-rebalancing.
func RebalanceTemplateName(p *v1alpha1.AnalyticsPipeline) string {
	return KafkaName(p) + "-rebalance-template"
}

// BrokerRemovalName is the name of the KafkaRebalance that empties the last broker but one.
func BrokerRemovalName(p *v1alpha1.AnalyticsPipeline) string {
	return KafkaName(p) + "-remove-brokers"
}

// BootstrapServers is the bootstrap address of p's Kafka cluster (plain listener).
func BootstrapServers(p *v1alpha1.AnalyticsPipeline) string {
	return fmt.Sprintf("%s-kafka-bootstrap.%s.svc:%d", KafkaName(p), p.Namespace, KafkaPlainPort)
}

// SparkApplicationName is the name of p's SparkApplication; its driver pod is <name>-driver.
func SparkApplicationName(p *v1alpha1.AnalyticsPipeline) string { return p.Name }

// ElasticsearchName is the name of p's ECK Elasticsearch cluster.
func ElasticsearchName(p *v1alpha1.AnalyticsPipeline) string { return p.Name }

// ElasticsearchServiceHost is the DNS name of the Elasticsearch HTTP service ECK creates.
func ElasticsearchServiceHost(p *v1alpha1.AnalyticsPipeline) string {
	return fmt.Sprintf("%s-es-http.%s.svc", ElasticsearchName(p), p.Namespace)
}

// ElasticsearchServiceURL is the HTTPS endpoint of p's Elasticsearch cluster.
func ElasticsearchServiceURL(p *v1alpha1.AnalyticsPipeline) string {
	return fmt.Sprintf("https://%s:%d", ElasticsearchServiceHost(p), ElasticsearchPort)
}

// ElasticsearchCASecret is the Secret ECK writes the HTTP layer's CA certificate into.
func ElasticsearchCASecret(p *v1alpha1.AnalyticsPipeline) string {
	return ElasticsearchName(p) + "-es-http-certs-public"
}

// ElasticsearchStatefulSetName is the StatefulSet ECK creates for a nodeSet.
func ElasticsearchStatefulSetName(p *v1alpha1.AnalyticsPipeline, nodeSet string) string {
	return ElasticsearchName(p) + "-es-" + nodeSet
}
