package v1alpha1

// Condition types the operator sets, and every reason they carry (docs/api.md documents them).
const (
	// ConditionReady: the pipeline's plan is valid and every child reports ready; for a tier,
	// its StorageClass and volumes exist.
	ConditionReady = "Ready"
	// ConditionPlanValid: the spec could be planned (False names the field that stops it).
	ConditionPlanValid = "PlanValid"
	// ConditionStorageReady: every StorageTier the pipeline names exists and is Ready.
	ConditionStorageReady = "StorageReady"
	// ConditionKafkaReady: Strimzi reports the Kafka cluster, its pools and the topic ready.
	ConditionKafkaReady = "KafkaReady"
	// ConditionSparkReady: the Spark operator reports the application running.
	ConditionSparkReady = "SparkReady"
	// ConditionElasticsearchReady: ECK reports the Elasticsearch cluster green or ready.
	ConditionElasticsearchReady = "ElasticsearchReady"
	// ConditionPodsScheduled: no pod the upstream operators made for the pipeline (Elasticsearch,
	// Kafka, Spark) is one the scheduler cannot place; False names them, their child and the
	// scheduler's message. Part of Ready.
	ConditionPodsScheduled = "PodsScheduled"
	// ConditionAutoscaling: the autoscaler has fresh metrics and may act.
	ConditionAutoscaling = "Autoscaling"
	// ConditionKafkaDurable: an acknowledged write is on at least two brokers (the topic's
	// min.insync.replicas is 2 or more). Not part of Ready: a weaker setting is the user's choice.
	ConditionKafkaDurable = "KafkaDurable"
	// ConditionVolumesLost: for a local tier, True when a volume in use is on a node that is gone
	// (the message names the claims).
	ConditionVolumesLost = "VolumesLost"
	// ConditionChildrenAsApplied: the children hold the values Strata applies; False when another
	// field manager (a human with kubectl, another controller) changed a field Strata must own,
	// which Strata applied again. Not part of Ready: what Strata may leave stays the other
	// manager's (docs/ownership.md).
	ConditionChildrenAsApplied = "ChildrenAsApplied"
)

// Reasons of the ChildrenAsApplied condition.
const (
	// ReasonTakenBack (False): another manager changed fields Strata must own; Strata applied its
	// values again. The message names the child, the fields and the manager. Kept until the
	// pipeline's generation changes, so that the change is seen after Strata undid it.
	ReasonTakenBack = "TakenBack"
	// ReasonLeftToManager (True): every field Strata must own holds its value; another manager
	// holds, with its own value, a child's label that Strata sets only to describe the object, and
	// Strata leaves it to them (the message names it).
	ReasonLeftToManager = "LeftToManager"
	// ReasonAsApplied (True): every field Strata applies holds Strata's value.
	ReasonAsApplied = "AsApplied"
)

// Reasons of the KafkaDurable condition.
const (
	// ReasonReplicatedWrites: min.insync.replicas is at least 2; the message says how many
	// brokers' volumes can be lost without losing an acknowledged write.
	ReasonReplicatedWrites = "ReplicatedWrites"
	// ReasonSingleCopyWrites: min.insync.replicas is 1 (asked for in spec.kafka.minInSyncReplicas,
	// or a replication factor of 1): Kafka acknowledges a write stored on the leader alone, and
	// losing that broker's volume loses acknowledged writes.
	ReasonSingleCopyWrites = "SingleCopyWrites"
)

// Condition reasons shared by several conditions.
const (
	// ReasonUpstreamCRDMissing: the operator that owns a child kind (Strimzi, the Spark
	// operator, ECK) is not installed; the pipeline waits and recovers when its CRD appears.
	ReasonUpstreamCRDMissing = "UpstreamCRDMissing"
	// ReasonTierNotFound: the spec names a StorageTier that does not exist.
	ReasonTierNotFound = "TierNotFound"
	// ReasonStorageClassNotFound: a dynamic tier's StorageClass does not exist.
	ReasonStorageClassNotFound = "StorageClassNotFound"
	// ReasonInvalidSpec: the spec cannot be planned; the message names the field.
	ReasonInvalidSpec = "InvalidSpec"
	// ReasonCapacityExceeded: no configuration within the spec's bounds carries the workload;
	// the plan is applied at the bounds and the message says what to change.
	ReasonCapacityExceeded = "CapacityExceeded"
	// ReasonPlanned: the spec was planned.
	ReasonPlanned = "Planned"
	// ReasonApplyFailed: the API server refused a child object; the message says which and why,
	// and the operator retries with backoff.
	ReasonApplyFailed = "ApplyFailed"
	// ReasonProgressing: children exist but are not ready yet.
	ReasonProgressing = "Progressing"
	// ReasonAvailable: the object is ready.
	ReasonAvailable = "Available"
)

// Condition reasons a child's operator reports through KafkaReady, SparkReady or
// ElasticsearchReady.
const (
	// ReasonApplicationFailed: the Spark operator reports the SparkApplication failed (FAILED,
	// SUBMISSION_FAILED, FAILING); the message carries its error message.
	ReasonApplicationFailed = "ApplicationFailed"
	// ReasonUnhealthy: ECK reports the Elasticsearch cluster's health red.
	ReasonUnhealthy = "Unhealthy"
	// ReasonNotReconciled: a child object has had no status from its operator for longer than
	// the manager's --upstream-status-timeout after it was created: its operator is not running,
	// or does not watch the pipeline's namespace. The message names the operator, the namespace
	// and the setting that decides what it watches.
	ReasonNotReconciled = "NotReconciled"
)

// Reasons of the PodsScheduled condition.
const (
	// ReasonScheduled: no pod of the pipeline is unschedulable.
	ReasonScheduled = "Scheduled"
	// ReasonUnschedulable: the scheduler found no node for some of the pipeline's pods (their
	// PodScheduled condition is False, reason Unschedulable); the message names the first of
	// them, their child and the scheduler's message.
	ReasonUnschedulable = "Unschedulable"
)

// Condition reasons of a StorageTier.
const (
	// ReasonStorageClassConflict: a local tier's StorageClass exists but is not one Strata can
	// own (another provisioner, parameters, reclaim policy or binding mode, or another tier's);
	// the message says what differs. Strata does not change it: those fields are immutable.
	ReasonStorageClassConflict = "StorageClassConflict"
	// ReasonNoMatchingNodes: no node matches a local tier's spec.local.nodeSelector.
	ReasonNoMatchingNodes = "NoMatchingNodes"
	// ReasonPersistentVolumeConflict: a local volume's name is taken by a PersistentVolume that
	// is not the tier's, or one of the tier's volumes cannot be brought in step with the spec.
	ReasonPersistentVolumeConflict = "PersistentVolumeConflict"
	// ReasonNodeLost: a volume in use is on a node deleted, or NotReady beyond
	// spec.local.nodeLoss.gracePeriod (VolumesLost on a tier; StorageReady on a pipeline, naming
	// its claims).
	ReasonNodeLost = "NodeLost"
	// ReasonNoneLost: no volume in use is on a lost node (VolumesLost False).
	ReasonNoneLost = "NoneLost"
)

// Reasons of the Autoscaling condition.
const (
	// ReasonAutoscalingActive: metrics are fresh and the autoscaler decides every interval.
	ReasonAutoscalingActive = "Active"
	// ReasonMetricsUnavailable: Prometheus cannot be reached, or a signal a resource needs has
	// no fresh sample; that resource is not scaled.
	ReasonMetricsUnavailable = "MetricsUnavailable"
	// ReasonInvalidQuery: a query in spec.autoscaling.queries does not parse.
	ReasonInvalidQuery = "InvalidQuery"
)
