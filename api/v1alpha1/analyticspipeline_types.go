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
