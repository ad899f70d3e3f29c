package v1alpha1

import (
	"k8s.io/apimachinery/pkg/api/resource"
)

// Stage names: the parts of a pipeline that can limit its throughput.
const (
	StageKafkaBrokerNetwork = "KafkaBrokerNetwork"
	StageKafkaDisk          = "KafkaDisk"
	StageProducerNetwork    = "ProducerNetwork"
	StageSparkProcessing    = "SparkProcessing"
	StageSparkNetwork       = "SparkNetwork"
	// StageSparkShuffleDisk is the executors' spill and shuffle data volumes: each executor
	// writes what it reads to them, within what a volume of their size sustains.
	StageSparkShuffleDisk      = "SparkShuffleDisk"
	StageElasticsearchIndexing = "ElasticsearchIndexing"
	// BottleneckNone: every stage carries the workload within the target utilization.
	BottleneckNone = "None"
)

// Storage roles: the kinds of data a pipeline places on tiers.
const (
	RoleKafkaLog          = "KafkaLog"
	RoleSparkSpill        = "SparkSpill"
	RoleSparkShuffleData  = "SparkShuffleData"
	RoleElasticsearchData = "ElasticsearchData"
)

// Plan is every figure the operator decided for a pipeline. `strata plan -o json` prints it.
// Byte rates are integers in bytes per second; money is a decimal string with two places.
type Plan struct {
	// brokers is the planned Kafka broker count: the count applied now.
	Brokers int32 `json:"brokers"`
	// targetBrokers is the broker count the plan heads for while brokers leave one at a time, or
	// wait until Strimzi may remove one (PlanValid says which): brokers is then the step applied
	// now. Empty when brokers is the count the spec and the autoscaler's targets plan.
	// +optional
	TargetBrokers int32 `json:"targetBrokers,omitempty"`
	// replicationFactor is the topic's replication factor.
	ReplicationFactor int32 `json:"replicationFactor"`
	// minInSyncReplicas is the topic's min.insync.replicas.
	MinInSyncReplicas int32 `json:"minInSyncReplicas"`
	// partitions is the planned partition count of the topic.
	Partitions int32 `json:"partitions"`
	// executors is the planned Spark executor count.
	Executors int32 `json:"executors"`
	// executorCores is each executor's core count.
	ExecutorCores int32 `json:"executorCores"`
	// elasticsearchDataNodes is the planned Elasticsearch data node count.
	ElasticsearchDataNodes int32 `json:"elasticsearchDataNodes"`
	// shards is the planned primary shard count of the index.
	Shards int32 `json:"shards"`

	// ingestBytesPerSecond is the workload's ingest in bytes per second.
	IngestBytesPerSecond int64 `json:"ingestBytesPerSecond"`
	// linkUsableBytesPerSecond is one link's usable rate: bits ÷ 8 × efficiency.
	LinkUsableBytesPerSecond int64 `json:"linkUsableBytesPerSecond"`
	// linkPlannedBytesPerSecond is the usable rate times the target utilization: what the plan
	// lets one link carry.
	LinkPlannedBytesPerSecond int64 `json:"linkPlannedBytesPerSecond"`
	// brokerReceiveBytesPerSecond is what the busiest broker receives: from producers and from
	// the leaders it follows, for the ceil(partitions x replicationFactor / brokers) replicas it
	// holds (the mean share when the brokers divide that product evenly).
	BrokerReceiveBytesPerSecond int64 `json:"brokerReceiveBytesPerSecond"`
	// brokerSendBytesPerSecond is what the busiest broker sends: to consumers and to its
	// followers, for the ceil(partitions / brokers) partitions it leads.
	BrokerSendBytesPerSecond int64 `json:"brokerSendBytesPerSecond"`
	// brokerDiskWriteBytesPerSecond is what the busiest broker writes to its log volume: what
	// it receives.
	BrokerDiskWriteBytesPerSecond int64 `json:"brokerDiskWriteBytesPerSecond"`
	// producerSendBytesPerSecond is what one producer node sends.
	ProducerSendBytesPerSecond int64 `json:"producerSendBytesPerSecond"`
	// executorReceiveBytesPerSecond is what one executor reads from Kafka.
	ExecutorReceiveBytesPerSecond int64 `json:"executorReceiveBytesPerSecond"`

	// stages is every stage's capacity at 100 % of its usable resources.
	// +listType=map
	// +listMapKey=name
	Stages []StageCapacity `json:"stages"`
	// maxMessagesPerSecond is the smallest stage capacity: what the pipeline can carry.
	MaxMessagesPerSecond int64 `json:"maxMessagesPerSecond"`
	// bottleneck names the stage with the smallest capacity when some stage cannot carry the
	// workload within the target utilization, else None.
	Bottleneck string `json:"bottleneck"`
	// unsatisfied says why the workload cannot be carried within the spec's bounds; empty when
	// it can.
	// +optional
	Unsatisfied string `json:"unsatisfied,omitempty"`

	// executorMemory is the split of each executor pod's memory budget.
	ExecutorMemory ExecutorMemory `json:"executorMemory"`
	// resources are the CPU and memory of each Kafka and Elasticsearch pod, by role: requests
	// (memory also the limit), the JVM heap and the page cache inside the memory.
	// +listType=map
	// +listMapKey=role
	// +optional
	Resources []PodResources `json:"resources,omitempty"`

	// storage is each role's placement, size and monthly cost.
	// +listType=map
	// +listMapKey=role
	Storage []StoragePlacement `json:"storage"`
	// metadataVolumes are the KRaft controllers' and Elasticsearch masters' small volumes.
	// +listType=map
	// +listMapKey=role
	// +optional
	MetadataVolumes []MetadataVolume `json:"metadataVolumes,omitempty"`
	// localVolumes counts, per local tier, the claims the plan makes and the volumes the tier
	// has: on a local tier every claim takes a whole volume.
	// +listType=map
	// +listMapKey=tier
	// +optional
	LocalVolumes []LocalVolumeUse `json:"localVolumes,omitempty"`
	// storageUnsatisfied says why the data does not fit the storage: too few local volumes, a
	// retention that does not fit; empty when it fits. Like unsatisfied it makes PlanValid
	// False with reason CapacityExceeded, and the plan is still applied.
	// +optional
	StorageUnsatisfied string `json:"storageUnsatisfied,omitempty"`
	// retention is what the plan sets so that no data volume fills at the planned rate.
	Retention RetentionPlan `json:"retention"`
	// monthlyStorageCost is the total monthly storage cost of the placement.
	MonthlyStorageCost string `json:"monthlyStorageCost"`
	// singleTierMonthlyStorageCost is what the same storage costs with every role on the
	// fastest tier the pipeline names, so the saving of the placement is visible.
	SingleTierMonthlyStorageCost string `json:"singleTierMonthlyStorageCost"`
}

// StageCapacity is what one stage can carry.
type StageCapacity struct {
	// name is the stage: KafkaBrokerNetwork, KafkaDisk, ProducerNetwork, SparkProcessing,
	// SparkNetwork, SparkShuffleDisk or ElasticsearchIndexing.
	Name string `json:"name"`
	// maxMessagesPerSecond is the stage's capacity in records per second at 100 % of its usable
	// resources.
	MaxMessagesPerSecond int64 `json:"maxMessagesPerSecond"`
}

// ExecutorMemory splits an executor pod's budget: heap + offHeap + overhead + pageCache = pod.
type ExecutorMemory struct {
	// heap is the JVM heap (spark.executor.memory, -Xmx).
	Heap resource.Quantity `json:"heap"`
	// offHeap is Spark's off-heap memory (spark.memory.offHeap.size).
	OffHeap resource.Quantity `json:"offHeap"`
	// overhead is native memory outside heap and off-heap: metaspace, threads, buffers.
	Overhead resource.Quantity `json:"overhead"`
	// pageCache is the reserve for the OS page cache, which is charged to the pod.
	PageCache resource.Quantity `json:"pageCache"`
	// pod is the executor pod's memory limit: the budget.
	Pod resource.Quantity `json:"pod"`
	// sparkConf holds the Spark settings that realise the split.
	SparkConf map[string]string `json:"sparkConf"`
	// javaOptions are the executor JVM options that let the heap shrink and give memory back
	// to the OS, so the page cache can use it.
	JavaOptions string `json:"javaOptions"`
}

// StoragePlacement is one role's data on one tier.
type StoragePlacement struct {
	// role is KafkaLog, SparkSpill, SparkShuffleData or ElasticsearchData.
	Role string `json:"role"`
	// tier names the StorageTier.
	Tier string `json:"tier"`
	// storageClassName is the tier's StorageClass.
	StorageClassName string `json:"storageClassName"`
	// sizePerReplica is the volume size of each replica.
	SizePerReplica resource.Quantity `json:"sizePerReplica"`
	// replicas is the number of volumes (brokers, executors or data nodes).
	Replicas int32 `json:"replicas"`
	// volumeSize is what each volume really is: sizePerReplica rounded up to the tier's
	// minVolumeSize, or a whole local disk (capacityPerPath) on a local tier. It is what is priced.
	// +optional
	VolumeSize *resource.Quantity `json:"volumeSize,omitempty"`
	// writeBytesPerSecond is what one replica writes to its volume at the planned rate.
	// +optional
	WriteBytesPerSecond int64 `json:"writeBytesPerSecond,omitempty"`
	// sustainedWriteBytesPerSecond is the write bandwidth one volume of volumeSize sustains: the
	// tier's writeBytesPerSecond, or its throughputPerTiB baseline times the size up to that
	// ceiling. Where spill and shuffle data share one volume (one tier), each role gets half.
	// The plan keeps writeBytesPerSecond within the target utilization of it, and sizes spill
	// and shuffle data claims up on tiers where size buys bandwidth.
	// +optional
	SustainedWriteBytesPerSecond int64 `json:"sustainedWriteBytesPerSecond,omitempty"`
	// retentionSeconds is how long the role's data is kept at that rate: for KafkaLog and
	// ElasticsearchData what the retention settings keep, for spill and shuffle data how long
	// a volume takes to fill.
	// +optional
	RetentionSeconds int64 `json:"retentionSeconds,omitempty"`
	// monthlyCost is volumeSize × replicas × the tier's price.
	MonthlyCost string `json:"monthlyCost"`
}

// Metadata volume roles; also, with RoleKafkaBroker and RoleElasticsearchData, the roles of
// Plan.Resources.
const (
	RoleKafkaController     = "KafkaController"
	RoleElasticsearchMaster = "ElasticsearchMaster"
	RoleKafkaBroker         = "KafkaBroker"
)

// PodResources is the CPU and memory planned for each pod of one role.
type PodResources struct {
	// role is KafkaBroker, KafkaController, ElasticsearchData or ElasticsearchMaster.
	Role string `json:"role"`
	// cpu is each pod's CPU request (for Elasticsearch also its limit).
	CPU resource.Quantity `json:"cpu"`
	// memory is each pod's memory request and limit.
	Memory resource.Quantity `json:"memory"`
	// heap is the JVM heap (-Xms = -Xmx), inside memory.
	Heap resource.Quantity `json:"heap"`
	// pageCache is what memory leaves after the heap (and, for Kafka, the JVM's native memory):
	// the page cache of the pod's log or index files, charged to its memory cgroup; for
	// Elasticsearch it also holds the off-heap buffers.
	PageCache resource.Quantity `json:"pageCache"`
}

// MetadataVolume is one role's small metadata volumes.
type MetadataVolume struct {
	// role is KafkaController or ElasticsearchMaster.
	Role string `json:"role"`
	// tier names the StorageTier; empty for the cluster's default StorageClass.
	// +optional
	Tier string `json:"tier,omitempty"`
	// storageClassName is the tier's StorageClass; empty for the cluster's default.
	// +optional
	StorageClassName string `json:"storageClassName,omitempty"`
	// size is each volume's size.
	Size resource.Quantity `json:"size"`
	// replicas is the number of volumes.
	Replicas int32 `json:"replicas"`
}

// LocalVolumeUse is one local tier's claims against its volumes.
type LocalVolumeUse struct {
	// tier names the local StorageTier.
	Tier string `json:"tier"`
	// claims is the number of claims the plan places on it.
	Claims int32 `json:"claims"`
	// available is the tier's volume count from its status; absent when unknown (then the
	// count was not checked).
	// +optional
	Available *int32 `json:"available,omitempty"`
}

// RetentionPlan is the retention settings the plan chose.
type RetentionPlan struct {
	// kafkaRetentionBytes is the topic's retention.bytes, per partition.
	KafkaRetentionBytes int64 `json:"kafkaRetentionBytes"`
	// kafkaSegmentBytes is the topic's segment.bytes: Kafka deletes whole segments only.
	KafkaSegmentBytes int64 `json:"kafkaSegmentBytes"`
	// kafkaRetentionMs is the topic's retention.ms (spec.kafka.retention); 0 when not set.
	// +optional
	KafkaRetentionMs int64 `json:"kafkaRetentionMs,omitempty"`
	// elasticsearchReplicas is the replica count of each primary shard.
	ElasticsearchReplicas int32 `json:"elasticsearchReplicas"`
	// elasticsearchRolloverBytes is the lifecycle policy's rollover max_primary_shard_size.
	ElasticsearchRolloverBytes int64 `json:"elasticsearchRolloverBytes"`
	// elasticsearchRolloverSeconds is the lifecycle policy's rollover max_age.
	ElasticsearchRolloverSeconds int64 `json:"elasticsearchRolloverSeconds"`
	// elasticsearchDeleteAfterSeconds is the lifecycle policy's delete min_age (after rollover).
	ElasticsearchDeleteAfterSeconds int64 `json:"elasticsearchDeleteAfterSeconds"`
}
