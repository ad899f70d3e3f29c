package v1alpha1

import (
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// AnalyticsPipelineSpec describes a streaming pipeline — Kafka (Strimzi) feeding a Spark job
// (Spark operator) that writes into Elasticsearch (ECK) — with the load it must carry, the memory
// budget of its executors and the storage tiers its data may use.
// +kubebuilder:validation:XValidation:rule="(has(self.kafka.topic) && has(self.kafka.topic.partitions) && self.kafka.topic.partitions > 0) || self.spark.executors.max * (has(self.spark.executors.cores) ? self.spark.executors.cores : 1) <= 10000",message="automatic partitions (spec.spark.executors.max × spec.spark.executors.cores, rounded up to a multiple of the brokers only within the cap) would exceed 10000, the most Strata chooses by itself; set spec.kafka.topic.partitions (up to 100000) or lower spec.spark.executors.max",fieldPath=".kafka.topic.partitions"
type AnalyticsPipelineSpec struct {
	// workload is the load the pipeline must sustain.
	Workload WorkloadSpec `json:"workload"`
	// network describes the nodes' network links; the planner sizes Kafka from it.
	Network NetworkSpec `json:"network"`
	// kafka configures the Strimzi Kafka cluster and the pipeline's topic.
	Kafka KafkaSpec `json:"kafka"`
	// spark configures the Spark job that reads the topic and writes Elasticsearch.
	Spark SparkSpec `json:"spark"`
	// elasticsearch configures the ECK Elasticsearch cluster the job writes into.
	Elasticsearch ElasticsearchSpec `json:"elasticsearch"`
	// autoscaling lets the operator adjust the plan from Prometheus metrics.
	// +optional
	Autoscaling *AutoscalingSpec `json:"autoscaling,omitempty"`
	// volumeReclaimPolicy says what happens to the Kafka and Elasticsearch data volumes when the
	// pipeline is deleted: Retain (the default) keeps them, so that no acknowledged data is lost
	// by a mistaken delete; Delete removes them with the pipeline.
	// +kubebuilder:validation:Enum=Retain;Delete
	// +kubebuilder:default=Retain
	// +optional
	VolumeReclaimPolicy string `json:"volumeReclaimPolicy,omitempty"`
}

// WorkloadSpec is the load the pipeline must carry.
type WorkloadSpec struct {
	// messagesPerSecond is the ingest the pipeline must sustain, in records per second.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000000000
	MessagesPerSecond int64 `json:"messagesPerSecond"`
	// messageBytes is the average record size in bytes.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=104857600
	MessageBytes int64 `json:"messageBytes"`
	// consumerMessagesPerSecond is the rate consumers read at when catching up, in records per
	// second; 0 means messagesPerSecond.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1000000000
	// +kubebuilder:default=0
	// +optional
	ConsumerMessagesPerSecond int64 `json:"consumerMessagesPerSecond,omitempty"`
	// producers is the number of producer nodes; their links are checked like the brokers'.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=10000
	// +kubebuilder:default=1
	// +optional
	Producers int32 `json:"producers,omitempty"`
}

// NetworkSpec describes each node's network link.
type NetworkSpec struct {
	// linkBitsPerSecond is each node's link speed in bits per second (for example 1G or 10G).
	// +kubebuilder:validation:XValidation:rule="!string(self).contains('e-') && !string(self).contains('E-') && quantity(string(self)).asApproximateFloat() > 0.0 && quantity(string(self)).asApproximateFloat() <= 2e12 && quantity(string(self)).isGreaterThan(quantity('0')) && !quantity(string(self)).isGreaterThan(quantity('1600G'))",message="spec.network.linkBitsPerSecond must be greater than 0 and at most 1600G (1.6 Tbit/s, the fastest Ethernet rate standardised), written without a negative exponent"
	LinkBitsPerSecond resource.Quantity `json:"linkBitsPerSecond"`
	// efficiencyPercent is the usable share of the link after protocol overhead (1..100).
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	// +kubebuilder:default=90
	// +optional
	EfficiencyPercent int32 `json:"efficiencyPercent,omitempty"`
	// targetUtilizationPercent is the share of the usable link the plan may fill, leaving
	// headroom for bursts and recovery (1..100).
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	// +kubebuilder:default=80
	// +optional
	TargetUtilizationPercent int32 `json:"targetUtilizationPercent,omitempty"`
}

// Range bounds a count the plan chooses; min == max fixes it.
// +kubebuilder:validation:XValidation:rule="self.min <= self.max",message="min must be less than or equal to max"
type Range struct {
	// min is the smallest count the plan may choose.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	Min int32 `json:"min"`
	// max is the largest count the plan may choose.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	Max int32 `json:"max"`
}

// StorageRef places a role's data on a tier.
type StorageRef struct {
	// tier names the StorageTier.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Tier string `json:"tier"`
	// size is the volume size of each replica (each broker or each data node).
	// +kubebuilder:validation:XValidation:rule="!string(self).contains('e-') && !string(self).contains('E-') && quantity(string(self)).asApproximateFloat() >= 1e9 && quantity(string(self)).asApproximateFloat() <= 2e15 && !quantity(string(self)).isLessThan(quantity('1Gi')) && !quantity(string(self)).isGreaterThan(quantity('1Pi'))",message="size must be at least 1Gi (one Kafka log segment is 1 GiB) and at most 1Pi, written without a negative exponent"
	Size resource.Quantity `json:"size"`
}

// KafkaSpec configures the Strimzi Kafka cluster.
// +kubebuilder:validation:XValidation:rule="self.replicationFactor <= self.brokers.max",message="spec.kafka.replicationFactor must not exceed spec.kafka.brokers.max"
// +kubebuilder:validation:XValidation:rule="!has(self.minInSyncReplicas) || self.minInSyncReplicas <= self.replicationFactor",message="spec.kafka.minInSyncReplicas must not exceed spec.kafka.replicationFactor"
type KafkaSpec struct {
	// version is the Kafka version Strimzi runs.
	// Strata accepts the versions Strimzi 1.2.0 supports (KafkaVersions in bounds.go).
	// +kubebuilder:default="4.2.0"
	// +kubebuilder:validation:Enum="4.2.0";"4.2.1";"4.3.0";"4.3.1"
	// +optional
	Version string `json:"version,omitempty"`
	// replicationFactor is the topic's replication factor (1..5). Unless minInSyncReplicas says
	// otherwise, min.insync.replicas is replicationFactor-1 and at least 2 (1 only with a
	// replication factor of 1), so that an acknowledged write is on two brokers and survives the
	// loss of one broker's volume. With 2, producers are refused while a broker is down.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=5
	// +kubebuilder:default=3
	// +optional
	ReplicationFactor int32 `json:"replicationFactor,omitempty"`
	// minInSyncReplicas overrides the topic's min.insync.replicas (at most replicationFactor).
	// Set it only to trade durability for availability: with 1, Kafka acknowledges a write stored
	// on the leader alone, and losing that broker's volume loses acknowledged writes; the
	// KafkaDurable condition then says so. Empty: the default described at replicationFactor.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=5
	// +optional
	MinInSyncReplicas *int32 `json:"minInSyncReplicas,omitempty"`
	// brokers bounds the broker count; the plan picks the smallest that carries the workload.
	Brokers Range `json:"brokers"`
	// storage places the brokers' logs on a tier.
	Storage StorageRef `json:"storage"`
	// rackTopologyKey is the node label that names failure domains; replicas are spread over it
	// (Kafka's rack awareness, and the Kafka and Elasticsearch pods' topology spread). Empty
	// ("") turns rack awareness off: the Kafka cluster gets no rack and the pods are spread over
	// nodes (kubernetes.io/hostname) only. Rack awareness needs Strimzi's installation to let
	// its operator bind the strimzi-kafka-broker ClusterRole (get nodes) to the brokers.
	// +kubebuilder:default="kubernetes.io/hostname"
	// +kubebuilder:validation:MaxLength=317
	// +kubebuilder:validation:Pattern=`^$|^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$`
	// +optional
	RackTopologyKey string `json:"rackTopologyKey,omitempty"`
	// topic is the topic the producers write and the Spark job reads.
	// +optional
	Topic TopicSpec `json:"topic,omitempty"`
	// controllers places the KRaft controllers' small metadata volumes; by default on the
	// cluster's default StorageClass, not on the log tier (on a local tier each would take a
	// whole disk).
	// +optional
	Controllers *KafkaControllersSpec `json:"controllers,omitempty"`
	// resources overrides the brokers' planned CPU and memory. A CPU below the planned one
	// lowers what each broker moves (the KafkaBrokerNetwork stage).
	// +optional
	Resources *ComputeResources `json:"resources,omitempty"`
	// retention is how long the topic keeps records (the topic's retention.ms), for example
	// 24h. The plan also bounds the topic by size (retention.bytes), so that the brokers' log
	// volumes never fill; when the retention asked for does not fit on them, PlanValid is
	// False with reason CapacityExceeded and the hours that fit. Empty: only the size bound.
	// +optional
	Retention *metav1.Duration `json:"retention,omitempty"`
}

// KafkaControllersSpec configures the KRaft controllers.
type KafkaControllersSpec struct {
	// storage places the controllers' volumes.
	// +optional
	Storage MetadataStorage `json:"storage,omitempty"`
	// resources overrides the controllers' planned CPU and memory.
	// +optional
	Resources *ComputeResources `json:"resources,omitempty"`
}

// ComputeResources overrides the CPU and memory the plan gives each pod of a kind; an unset
// field keeps the planned value (status.plan.resources).
type ComputeResources struct {
	// cpu is each pod's CPU request (for Elasticsearch also its limit), 100m to 256 cores.
	// +kubebuilder:validation:XValidation:rule="!string(self).contains('e-') && !string(self).contains('E-') && quantity(string(self)).asApproximateFloat() >= 0.09 && quantity(string(self)).asApproximateFloat() <= 257.0 && !quantity(string(self)).isLessThan(quantity('100m')) && !quantity(string(self)).isGreaterThan(quantity('256'))",message="cpu must be between 100m and 256, written without a negative exponent"
	// +optional
	CPU *resource.Quantity `json:"cpu,omitempty"`
	// memory is each pod's memory request and limit, 1Gi to 1Ti; the JVM heap and the page
	// cache are planned inside it.
	// +kubebuilder:validation:XValidation:rule="!string(self).contains('e-') && !string(self).contains('E-') && quantity(string(self)).asApproximateFloat() >= 1e9 && quantity(string(self)).asApproximateFloat() <= 2e12 && !quantity(string(self)).isLessThan(quantity('1Gi')) && !quantity(string(self)).isGreaterThan(quantity('1Ti'))",message="memory must be between 1Gi and 1Ti, written without a negative exponent"
	// +optional
	Memory *resource.Quantity `json:"memory,omitempty"`
}

// ElasticsearchMastersSpec configures the dedicated master nodes.
type ElasticsearchMastersSpec struct {
	// storage places the masters' volumes.
	// +optional
	Storage MetadataStorage `json:"storage,omitempty"`
	// resources overrides the masters' planned CPU and memory.
	// +optional
	Resources *ComputeResources `json:"resources,omitempty"`
}

// MetadataStorage places small metadata volumes (KRaft controllers, Elasticsearch masters).
type MetadataStorage struct {
	// tier names a StorageTier; empty means the cluster's default StorageClass (the claims
	// name no storageClassName).
	// +kubebuilder:validation:MaxLength=253
	// +optional
	Tier string `json:"tier,omitempty"`
	// size is each volume's size; empty means 10Gi.
	// +kubebuilder:validation:XValidation:rule="!string(self).contains('e-') && !string(self).contains('E-') && quantity(string(self)).asApproximateFloat() >= 1e9 && quantity(string(self)).asApproximateFloat() <= 2e15 && !quantity(string(self)).isLessThan(quantity('1Gi')) && !quantity(string(self)).isGreaterThan(quantity('1Pi'))",message="the metadata storage size must be at least 1Gi and at most 1Pi, written without a negative exponent"
	// +optional
	Size *resource.Quantity `json:"size,omitempty"`
}

// TopicSpec configures the pipeline's Kafka topic.
type TopicSpec struct {
	// name is the Kafka topic name; empty means the pipeline's name.
	// +kubebuilder:validation:MaxLength=249
	// +kubebuilder:validation:Pattern=`^[a-zA-Z0-9._-]*$`
	// +optional
	Name string `json:"name,omitempty"`
	// partitions is the partition count; 0 means auto: executors x cores, so that no executor
	// core sits idle, rounded up to a multiple of the brokers, so that every broker leads as
	// many partitions (an uneven count makes the busiest broker the bottleneck); at most 10000,
	// and executors x cores itself where rounding up would pass that. Partitions only ever grow.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100000
	// +kubebuilder:default=0
	// +optional
	Partitions int32 `json:"partitions,omitempty"`
}

// SparkSpec configures the Spark job.
// +kubebuilder:validation:XValidation:rule="!has(self.mainClass) || has(self.mainApplicationFile)",message="spec.spark.mainClass: set mainApplicationFile too (the jar holding the class), or neither for Strata's ingestion job"
// +kubebuilder:validation:XValidation:rule="!has(self.shuffle.dataTier) || self.shuffle.dataTier == self.shuffle.spillTier || !has(self.sparkVersion) || int(self.sparkVersion.split('.')[0]) >= 4",message="spec.spark.sparkVersion: the tiered shuffle plugin (spec.spark.shuffle.dataTier other than spillTier) is built for Spark 4.0 and later"
type SparkSpec struct {
	// image is the container image of the Spark job, a reference docker would pull
	// (registry/name:tag or @digest). Absent: the image of Strata's ingestion job
	// (ghcr.io/strata-dev/strata-ingest at the operator's version, built from jvm/Dockerfile).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	// +kubebuilder:validation:Pattern=`^((?:(?:(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])(?:\.(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9]))*|\[(?:[a-fA-F0-9:]+)\])(?::[0-9]+)?/)?[a-z0-9]+(?:(?:[._]|__|[-]+)[a-z0-9]+)*(?:/[a-z0-9]+(?:(?:[._]|__|[-]+)[a-z0-9]+)*)*)(?::([\w][\w.-]{0,127}))?(?:@([A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*[:][[:xdigit:]]{32,}))?$`
	// +optional
	Image string `json:"image,omitempty"`
	// mainApplicationFile is the job's jar or script, e.g. local:///opt/app/job.jar. Absent:
	// Strata's ingestion job (local:///opt/strata/strata-ingest.jar), which the operator
	// configures from the plan; a job of the user's gets only the Kafka and Elasticsearch
	// endpoints and credentials.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=2048
	// +optional
	MainApplicationFile string `json:"mainApplicationFile,omitempty"`
	// mainClass is the job's main class (JVM jobs). Absent with mainApplicationFile absent:
	// Strata's ingestion job's (dev.strata.ingest.IngestJob).
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	MainClass string `json:"mainClass,omitempty"`
	// sparkVersion is the Spark version of the image (the default is that of Strata's job image,
	// apache/spark:4.0.2: jvm/Dockerfile).
	// +kubebuilder:default="4.0.2"
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:Pattern=`^[0-9]+\.[0-9]+(\.[0-9]+)?([-+][0-9A-Za-z.-]+)?$`
	// +optional
	SparkVersion string `json:"sparkVersion,omitempty"`
	// executors bounds the executor count and sets each executor's cores.
	Executors ExecutorsSpec `json:"executors"`
	// messagesPerSecondPerExecutor is the processing capacity of one executor in records per
	// second (measured; the autoscaler refines it). For Strata's ingestion job, `make job-bench`
	// measured about 4,800 records/s per executor core for 9,028-byte records (0.208 ms of job
	// CPU per record, Kafka to index, on a loaded 2-core machine; docs/ingest-job.md), next to
	// the sensor-pipeline study's ~4,150 records/s per worker: an executor of n cores carries
	// about n times that, less what its node's network and the index allow.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000000000
	MessagesPerSecondPerExecutor int64 `json:"messagesPerSecondPerExecutor"`
	// memory is each executor pod's memory budget and its split.
	Memory MemorySpec `json:"memory"`
	// shuffle places spill and shuffle data files on tiers.
	Shuffle ShuffleSpec `json:"shuffle"`
	// serviceAccountName runs the driver as a ServiceAccount of the user's, which needs the rights
	// to create executor pods, their PersistentVolumeClaims, a Service and a ConfigMap. Only where
	// the operator's installation allows it (the chart's spark.allowUserServiceAccounts);
	// otherwise PlanValid is False naming this field. Empty (the default): the driver runs as
	// "<pipeline>-spark", a ServiceAccount the operator makes and binds in the pipeline's
	// namespace to the strata-spark-driver ClusterRole.
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$`
	// +optional
	ServiceAccountName string `json:"serviceAccountName,omitempty"`
	// arguments are passed to the main class (at most 256, each at most 8192 characters).
	// +kubebuilder:validation:MaxItems=256
	// +kubebuilder:validation:items:MaxLength=8192
	// +optional
	Arguments []string `json:"arguments,omitempty"`
	// sparkConf holds extra Spark settings. Settings the plan decides (memory, local dirs,
	// Kafka and Elasticsearch endpoints) win over these. At most 256 settings; keys of at most
	// 256 characters, values of at most 8192.
	// Keys that would mount secrets or host paths into the job's pods, or change the identity,
	// namespace or pod templates they run with, are refused: creating a pipeline must not let
	// its author run pods with more than the operator gives the job.
	// +kubebuilder:validation:MaxProperties=256
	// +kubebuilder:validation:XValidation:rule="self.all(k, size(k) <= 256 && size(self[k]) <= 8192)",message="spec.spark.sparkConf: keys must be at most 256 characters and values at most 8192"
	// +kubebuilder:validation:XValidation:rule="self.all(k, !(k.startsWith('spark.kubernetes.driver.secretKeyRef.') || k.startsWith('spark.kubernetes.executor.secretKeyRef.') || k.startsWith('spark.kubernetes.driver.secrets.') || k.startsWith('spark.kubernetes.executor.secrets.') || k.startsWith('spark.kubernetes.driver.volumes.hostPath.') || k.startsWith('spark.kubernetes.executor.volumes.hostPath.') || k.startsWith('spark.kubernetes.authenticate.') || k == 'spark.kubernetes.namespace' || k.endsWith('.podTemplateFile') || k.endsWith('.podTemplateContainerName') || k == 'spark.kubernetes.driver.master' || k == 'spark.master' || k.startsWith('spark.kubernetes.driver.serviceAccountName') || k.startsWith('spark.kubernetes.executor.serviceAccountName') || k == 'spark.kubernetes.file.upload.path' || k == 'spark.kubernetes.kerberos.tokenSecret.name'))",messageExpression="'spec.spark.sparkConf: ' + self.filter(k, k.startsWith('spark.kubernetes.driver.secretKeyRef.') || k.startsWith('spark.kubernetes.executor.secretKeyRef.') || k.startsWith('spark.kubernetes.driver.secrets.') || k.startsWith('spark.kubernetes.executor.secrets.') || k.startsWith('spark.kubernetes.driver.volumes.hostPath.') || k.startsWith('spark.kubernetes.executor.volumes.hostPath.') || k.startsWith('spark.kubernetes.authenticate.') || k == 'spark.kubernetes.namespace' || k.endsWith('.podTemplateFile') || k.endsWith('.podTemplateContainerName') || k == 'spark.kubernetes.driver.master' || k == 'spark.master' || k.startsWith('spark.kubernetes.driver.serviceAccountName') || k.startsWith('spark.kubernetes.executor.serviceAccountName') || k == 'spark.kubernetes.file.upload.path' || k == 'spark.kubernetes.kerberos.tokenSecret.name')[0] + ' may not be set: it would mount secrets or host paths, or change the identity, namespace or pod template of the job (the operator sets these)'"
	// +optional
	SparkConf map[string]string `json:"sparkConf,omitempty"`
	// fsGroup is the group the job's pods run with and own their volumes by: the kubelet makes
	// the spill and shuffle volumes group-writable for it. The apache/spark images run as uid
	// and gid 185, which local volumes and fresh filesystems (root-owned, 0755) do not let write.
	// +kubebuilder:default=185
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=2147483647
	// +optional
	FSGroup *int64 `json:"fsGroup,omitempty"`
}

// ExecutorsSpec bounds the executor count.
// +kubebuilder:validation:XValidation:rule="self.min <= self.max",message="spec.spark.executors.min must be less than or equal to spec.spark.executors.max"
type ExecutorsSpec struct {
	// min is the smallest executor count.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=10000
	Min int32 `json:"min"`
	// max is the largest executor count.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=10000
	Max int32 `json:"max"`
	// cores is each executor's core count; Spark runs one task per core.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=256
	// +kubebuilder:default=1
	// +optional
	Cores int32 `json:"cores,omitempty"`
}

// MemorySpec is an executor pod's memory budget: heap + off-heap + overhead + page cache.
// +kubebuilder:validation:XValidation:rule="!string(self.budget).contains('e-') && !string(self.budget).contains('E-') && !string(self.minHeap).contains('e-') && !string(self.minHeap).contains('E-') && (quantity(string(self.minHeap)).asApproximateFloat() > 1e16 || (quantity(string(self.minHeap)).asApproximateFloat() >= 1e8 && !quantity(string(self.minHeap)).isLessThan(quantity('450Mi'))))",message="spec.spark.memory.minHeap must be at least 450Mi: Spark refuses to start an executor with a smaller heap"
// +kubebuilder:validation:XValidation:rule="!string(self.budget).contains('e-') && !string(self.budget).contains('E-') && !string(self.minHeap).contains('e-') && !string(self.minHeap).contains('E-') && ((quantity(string(self.minHeap)).asApproximateFloat() < 1.0 || quantity(string(self.minHeap)).asApproximateFloat() > 1e16 || quantity(string(self.budget)).asApproximateFloat() < 1.0 || quantity(string(self.budget)).asApproximateFloat() > 1e16) ? quantity(string(self.minHeap)).asApproximateFloat() < quantity(string(self.budget)).asApproximateFloat() : quantity(string(self.minHeap)).isLessThan(quantity(string(self.budget))))",message="spec.spark.memory.minHeap must be less than spec.spark.memory.budget"
// +kubebuilder:validation:XValidation:rule="!string(self.budget).contains('e-') && !string(self.budget).contains('E-') && !string(self.minHeap).contains('e-') && !string(self.minHeap).contains('E-') && (quantity(string(self.budget)).asApproximateFloat() > 5e8 && quantity(string(self.budget)).asApproximateFloat() < 5e12 && quantity(string(self.budget)).isGreaterThan(quantity('512Mi')) && quantity(string(self.budget)).isLessThan(quantity('4Ti')))",message="spec.spark.memory.budget must be more than 512Mi and less than 4Ti"
// +kubebuilder:validation:XValidation:rule="!string(self.budget).contains('e-') && !string(self.budget).contains('E-') && !string(self.minHeap).contains('e-') && !string(self.minHeap).contains('E-') && (!(quantity(string(self.budget)).asApproximateFloat() > 536870912.0 && quantity(string(self.budget)).asApproximateFloat() < 4398046511104.0 && quantity(string(self.minHeap)).asApproximateFloat() < quantity(string(self.budget)).asApproximateFloat()) || ((quantity(string(self.budget)).asInteger() - quantity(string(self.budget)).asInteger() * self.pageCachePercent / 100) - ((quantity(string(self.budget)).asInteger() - quantity(string(self.budget)).asInteger() * self.pageCachePercent / 100) / 11 > 402653184 ? (quantity(string(self.budget)).asInteger() - quantity(string(self.budget)).asInteger() * self.pageCachePercent / 100) / 11 : 402653184)) * (100 - self.offHeapPercent) / 100 >= quantity(string(self.minHeap)).asInteger())",message="spec.spark.memory: pageCachePercent and offHeapPercent leave no room for minHeap in budget after the native overhead"
type MemorySpec struct {
	// budget is the executor pod's whole memory: heap + off-heap + overhead + page cache. The
	// page cache an executor's shuffle files use is charged to its pod, so it must fit here.
	Budget resource.Quantity `json:"budget"`
	// offHeapPercent is the share of Spark memory (heap + off-heap) placed off-heap (0..90).
	// Off-heap memory returns to the OS when freed, so the page cache can grow into it.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=90
	// +kubebuilder:default=0
	// +optional
	OffHeapPercent int32 `json:"offHeapPercent"`
	// pageCachePercent is the share of the budget kept for the OS page cache (0..80).
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=80
	// +kubebuilder:default=20
	// +optional
	PageCachePercent int32 `json:"pageCachePercent"`
	// minHeap is the smallest heap the job may get.
	// +kubebuilder:default="1Gi"
	// +optional
	MinHeap *resource.Quantity `json:"minHeap,omitempty"`
}

// ShuffleSpec places Spark's intermediate files on tiers.
type ShuffleSpec struct {
	// spillTier holds spill and temp files, which are read and written many times.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	SpillTier string `json:"spillTier"`
	// spillSize is each executor's spill volume size.
	// +kubebuilder:validation:XValidation:rule="!string(self).contains('e-') && !string(self).contains('E-') && quantity(string(self)).asApproximateFloat() >= 1e9 && quantity(string(self)).asApproximateFloat() <= 2e15 && !quantity(string(self)).isLessThan(quantity('1Gi')) && !quantity(string(self)).isGreaterThan(quantity('1Pi'))",message="spec.spark.shuffle.spillSize must be at least 1Gi and at most 1Pi, written without a negative exponent"
	SpillSize resource.Quantity `json:"spillSize"`
	// dataTier holds final shuffle data files, written once and read a few times; empty means
	// spillTier.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	DataTier string `json:"dataTier,omitempty"`
	// dataSize is each executor's shuffle data volume size; empty means spillSize.
	// +kubebuilder:validation:XValidation:rule="!string(self).contains('e-') && !string(self).contains('E-') && quantity(string(self)).asApproximateFloat() >= 1e9 && quantity(string(self)).asApproximateFloat() <= 2e15 && !quantity(string(self)).isLessThan(quantity('1Gi')) && !quantity(string(self)).isGreaterThan(quantity('1Pi'))",message="spec.spark.shuffle.dataSize must be at least 1Gi and at most 1Pi, written without a negative exponent"
	// +optional
	DataSize *resource.Quantity `json:"dataSize,omitempty"`
	// pluginJar is where the driver and the executors get Strata's tiered shuffle plugin
	// (strata-shuffle.jar, built from jvm/shuffle-plugin/), which keeps final shuffle files on dataTier
	// and spill files on spillTier; used only when the two tiers differ. Either a path inside the
	// job's image (local:///..., the image must contain the jar) or a URL Spark downloads
	// (https://...). Empty means local:///opt/strata/strata-shuffle.jar.
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:Pattern=`^[a-z][a-z0-9+.-]*://[^,\s]+\.jar$`
	// +optional
	PluginJar string `json:"pluginJar,omitempty"`
}

// ElasticsearchSpec configures the ECK Elasticsearch cluster.
type ElasticsearchSpec struct {
	// version is the Elasticsearch version ECK runs.
	// +kubebuilder:default="8.19.0"
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:Pattern=`^[0-9]+\.[0-9]+\.[0-9]+$`
	// +optional
	Version string `json:"version,omitempty"`
	// dataNodes bounds the data node count; the plan picks enough for the indexing rate.
	DataNodes Range `json:"dataNodes"`
	// masterNodes is the number of dedicated master nodes (odd, so that a quorum exists).
	// +kubebuilder:validation:Enum=1;3;5
	// +kubebuilder:default=3
	// +optional
	MasterNodes int32 `json:"masterNodes,omitempty"`
	// messagesPerSecondPerNode is the indexing capacity of one data node in records per second.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000000000
	MessagesPerSecondPerNode int64 `json:"messagesPerSecondPerNode"`
	// storage places the data nodes' indices on a tier.
	Storage StorageRef `json:"storage"`
	// masters places the dedicated masters' small volumes; by default on the cluster's default
	// StorageClass, not on the data tier.
	// +optional
	Masters *ElasticsearchMastersSpec `json:"masters,omitempty"`
	// resources overrides the data nodes' planned CPU and memory. A CPU below the planned one
	// lowers what each data node indexes (the ElasticsearchIndexing stage).
	// +optional
	Resources *ComputeResources `json:"resources,omitempty"`
	// replicas is the number of replica copies of each primary shard; every replica is written
	// and stored again, so the plan counts it in the write rate, the storage and the indexing
	// capacity.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=5
	// +kubebuilder:default=1
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`
	// shards is the index's primary shard count; 0 means auto (= data nodes).
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1024
	// +kubebuilder:default=0
	// +optional
	Shards int32 `json:"shards,omitempty"`
	// virtualMemory is how Elasticsearch's need for vm.max_map_count >= 262144 is met, which
	// its bootstrap check enforces: MMapOff (the default) turns memory-mapped index files off
	// (node.store.allow_mmap: false), which runs on any node at some cost to search speed;
	// SysctlInitContainer raises the node's setting with a privileged init container (the
	// namespace must admit privileged pods); NodeConfigured leaves it to the nodes, which must
	// have it set already.
	// +kubebuilder:validation:Enum=MMapOff;SysctlInitContainer;NodeConfigured
	// +kubebuilder:default=MMapOff
	// +optional
	VirtualMemory string `json:"virtualMemory,omitempty"`
}

// AnalyticsPipelineStatus is what the operator planned and observed.
type AnalyticsPipelineStatus struct {
	// observedGeneration is the generation the status was computed from.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// conditions: Ready, PlanValid, StorageReady, PodsScheduled, KafkaReady, SparkReady,
	// ElasticsearchReady, Autoscaling.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// plan is the plan the operator applies; `strata plan -o json` prints the same object.
	// +optional
	Plan *Plan `json:"plan,omitempty"`
	// autoscaling is what the autoscaler decided and the state its stabilisation needs.
	// +optional
	Autoscaling *AutoscalingStatus `json:"autoscaling,omitempty"`
	// kafkaClusterId is the KRaft cluster ID of the pipeline's Kafka cluster (the Kafka
	// resource's status.clusterId). With volumeReclaimPolicy Retain it is also recorded on the
	// kept claims, and a pipeline re-created with the same name gives its new Kafka cluster that
	// ID, so that the brokers accept their old volumes.
	// +optional
	KafkaClusterID string `json:"kafkaClusterId,omitempty"`
}

// AnalyticsPipeline is a Kafka → Spark → Elasticsearch pipeline on tiered storage, sized by the
// operator from its workload.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=apl,categories=strata
// +kubebuilder:validation:XValidation:rule="size(self.metadata.name) <= 23",message="metadata.name must be at most 23 characters: Strimzi names broker pods <name>-<name>-broker-<id>, which must fit a 63-character hostname"
// +kubebuilder:validation:XValidation:rule="size(self.metadata.name) > 23 || self.metadata.name.matches('^[a-z]([-a-z0-9]*[a-z0-9])?$')",message="metadata.name must be a DNS-1035 label (lowercase letters, digits and '-', starting with a letter): the Spark operator refuses a SparkApplication named otherwise, and Strimzi and ECK name Services after the pipeline"
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Brokers",type=integer,JSONPath=`.status.plan.brokers`
// +kubebuilder:printcolumn:name="Executors",type=integer,JSONPath=`.status.plan.executors`
// +kubebuilder:printcolumn:name="Bottleneck",type=string,JSONPath=`.status.plan.bottleneck`
// +kubebuilder:printcolumn:name="Monthly-Cost",type=string,JSONPath=`.status.plan.monthlyStorageCost`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type AnalyticsPipeline struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   AnalyticsPipelineSpec   `json:"spec"`
	Status AnalyticsPipelineStatus `json:"status,omitempty"`
}

// AnalyticsPipelineList is a list of AnalyticsPipelines.
// +kubebuilder:object:root=true
type AnalyticsPipelineList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []AnalyticsPipeline `json:"items"`
}

func init() {
	SchemeBuilder.Register(&AnalyticsPipeline{}, &AnalyticsPipelineList{})
}
