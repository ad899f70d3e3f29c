package v1alpha1

import (
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Medium is the kind of device behind a storage tier.
// +kubebuilder:validation:Enum=NVMe;SSD;HDD
type Medium string

const (
	MediumNVMe Medium = "NVMe"
	MediumSSD  Medium = "SSD"
	MediumHDD  Medium = "HDD"
)

// StorageTierSpec describes a class of storage: its medium, speed and price, and, for local
// storage, where its volumes are.
// +kubebuilder:validation:XValidation:rule="!has(self.local) || self.local.paths.all(p, p.startsWith('/'))",message="spec.local.paths: every path must be absolute"
type StorageTierSpec struct {
	// medium is the kind of device: NVMe, SSD or HDD. The planner puts random-access data
	// (spill files, Kafka logs, hot indices) on the fastest medium a pipeline names.
	Medium Medium `json:"medium"`

	// storageClassName names the StorageClass volumes of this tier use. For a local tier the
	// operator creates and owns that StorageClass; otherwise it must already exist.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$`
	StorageClassName string `json:"storageClassName"`

	// readBytesPerSecond is the sustained sequential read bandwidth of one volume, in bytes per
	// second (for example 800M).
	// +kubebuilder:validation:XValidation:rule="!string(self).contains('e-') && !string(self).contains('E-') && quantity(string(self)).asApproximateFloat() > 0.0 && quantity(string(self)).asApproximateFloat() <= 2e12 && quantity(string(self)).isGreaterThan(quantity('0')) && !quantity(string(self)).isGreaterThan(quantity('1T'))",message="spec.readBytesPerSecond must be greater than 0 and at most 1T (1 TB/s), written without a negative exponent"
	ReadBytesPerSecond resource.Quantity `json:"readBytesPerSecond"`

	// writeBytesPerSecond is the sustained sequential write bandwidth of one volume, in bytes per
	// second. The planner checks each Kafka broker's disk write rate against it.
	// +kubebuilder:validation:XValidation:rule="!string(self).contains('e-') && !string(self).contains('E-') && quantity(string(self)).asApproximateFloat() > 0.0 && quantity(string(self)).asApproximateFloat() <= 2e12 && quantity(string(self)).isGreaterThan(quantity('0')) && !quantity(string(self)).isGreaterThan(quantity('1T'))",message="spec.writeBytesPerSecond must be greater than 0 and at most 1T (1 TB/s), written without a negative exponent"
	WriteBytesPerSecond resource.Quantity `json:"writeBytesPerSecond"`

	// monthlyPricePerGiB is the price of one GiB for a month, as a decimal string in currency
	// units (for example "0.216"). Strings, not floats, so that money is never rounded.
	// +kubebuilder:validation:MaxLength=16
	// +kubebuilder:validation:Pattern=`^(0|[1-9][0-9]{0,8})(\.[0-9]{1,6})?$`
	MonthlyPricePerGiB string `json:"monthlyPricePerGiB"`

	// minVolumeSize is the smallest volume the tier's provisioner creates (AWS st1: 125Gi).
	// The plan rounds smaller claims up to it and prices the rounded size.
	// +kubebuilder:validation:XValidation:rule="!string(self).contains('e-') && !string(self).contains('E-') && quantity(string(self)).asApproximateFloat() > 0.0 && quantity(string(self)).asApproximateFloat() <= 2e15 && quantity(string(self)).isGreaterThan(quantity('0')) && !quantity(string(self)).isGreaterThan(quantity('1Pi'))",message="spec.minVolumeSize must be greater than 0 and at most 1Pi, written without a negative exponent"
	// +optional
	MinVolumeSize *resource.Quantity `json:"minVolumeSize,omitempty"`

	// throughputPerTiB, when present, makes a volume's baseline bandwidth scale with its size
	// (AWS st1: 40 MB/s read and write per TiB); readBytesPerSecond and writeBytesPerSecond are
	// then the ceilings (st1: 500M). The plan uses the bandwidth a volume of the planned size
	// really gets.
	// +optional
	ThroughputPerTiB *ThroughputPerTiB `json:"throughputPerTiB,omitempty"`

	// local, when present, makes this a local tier: the operator owns the StorageClass
	// (kubernetes.io/no-provisioner, WaitForFirstConsumer, reclaim Retain) and one local
	// PersistentVolume per matching node and path. When absent, storageClassName names an
	// existing dynamic StorageClass and the operator creates no volumes.
	// +optional
	Local *LocalStorage `json:"local,omitempty"`
}

// ThroughputPerTiB is a volume's bandwidth per TiB of its size.
type ThroughputPerTiB struct {
	// readBytesPerSecond is the sustained (baseline) read bandwidth per TiB.
	// +kubebuilder:validation:XValidation:rule="!string(self).contains('e-') && !string(self).contains('E-') && quantity(string(self)).asApproximateFloat() > 0.0 && quantity(string(self)).asApproximateFloat() <= 2e12 && quantity(string(self)).isGreaterThan(quantity('0')) && !quantity(string(self)).isGreaterThan(quantity('1T'))",message="spec.throughputPerTiB.readBytesPerSecond must be greater than 0 and at most 1T, written without a negative exponent"
	ReadBytesPerSecond resource.Quantity `json:"readBytesPerSecond"`
	// writeBytesPerSecond is the sustained (baseline) write bandwidth per TiB.
	// +kubebuilder:validation:XValidation:rule="!string(self).contains('e-') && !string(self).contains('E-') && quantity(string(self)).asApproximateFloat() > 0.0 && quantity(string(self)).asApproximateFloat() <= 2e12 && quantity(string(self)).isGreaterThan(quantity('0')) && !quantity(string(self)).isGreaterThan(quantity('1T'))",message="spec.throughputPerTiB.writeBytesPerSecond must be greater than 0 and at most 1T, written without a negative exponent"
	WriteBytesPerSecond resource.Quantity `json:"writeBytesPerSecond"`
	// burstBytesPerSecond is the burst bandwidth per TiB a volume reaches while it has burst
	// credits (st1: 250M). Informational: the plan sizes for the baseline, which is what a
	// streaming pipeline sustains once the credits are spent.
	// +kubebuilder:validation:XValidation:rule="!string(self).contains('e-') && !string(self).contains('E-') && quantity(string(self)).asApproximateFloat() > 0.0 && quantity(string(self)).asApproximateFloat() <= 2e12 && quantity(string(self)).isGreaterThan(quantity('0')) && !quantity(string(self)).isGreaterThan(quantity('1T'))",message="spec.throughputPerTiB.burstBytesPerSecond must be greater than 0 and at most 1T, written without a negative exponent"
	// +optional
	BurstBytesPerSecond *resource.Quantity `json:"burstBytesPerSecond,omitempty"`
}

// LocalStorage says where a local tier's disks are mounted.
type LocalStorage struct {
	// nodeSelector selects the nodes that have this tier's disks mounted at every path.
	// +kubebuilder:validation:XValidation:rule="!has(self.matchExpressions) || self.matchExpressions.all(e, e.operator in ['In', 'NotIn', 'Exists', 'DoesNotExist'])",message="spec.local.nodeSelector.matchExpressions: operator must be In, NotIn, Exists or DoesNotExist"
	// +kubebuilder:validation:XValidation:rule="!has(self.matchExpressions) || self.matchExpressions.all(e, !(e.operator in ['In', 'NotIn']) || (has(e.values) && size(e.values) > 0))",message="spec.local.nodeSelector.matchExpressions: In and NotIn need values"
	// +kubebuilder:validation:XValidation:rule="!has(self.matchExpressions) || self.matchExpressions.all(e, !(e.operator in ['Exists', 'DoesNotExist']) || !has(e.values) || size(e.values) == 0)",message="spec.local.nodeSelector.matchExpressions: Exists and DoesNotExist take no values"
	NodeSelector metav1.LabelSelector `json:"nodeSelector"`

	// paths are the mount points of the tier's disks on each selected node; each becomes one
	// PersistentVolume per node.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:items:MinLength=2
	// +kubebuilder:validation:items:MaxLength=1024
	// +listType=set
	Paths []string `json:"paths"`

	// capacityPerPath is the capacity of the disk at each path.
	// +kubebuilder:validation:XValidation:rule="!string(self).contains('e-') && !string(self).contains('E-') && quantity(string(self)).asApproximateFloat() > 0.0 && quantity(string(self)).asApproximateFloat() <= 2e15 && quantity(string(self)).isGreaterThan(quantity('0')) && !quantity(string(self)).isGreaterThan(quantity('1Pi'))",message="spec.local.capacityPerPath must be greater than 0 and at most 1Pi, written without a negative exponent"
	CapacityPerPath resource.Quantity `json:"capacityPerPath"`

	// reclaim says what happens to a volume whose claim is deleted (phase Released): Recycle
	// (the default) wipes it with a cleanup pod on its node and makes it Available again, the
	// way sig-storage's local-static-provisioner cleans its volumes; Retain leaves it Released
	// with its data, until someone deletes it.
	// +kubebuilder:default=Recycle
	// +optional
	Reclaim LocalReclaim `json:"reclaim,omitempty"`

	// nodeLoss says when a volume in use counts as lost with its node, and whether its claim is
	// then deleted so that the workload can start again on another node's volume.
	// +optional
	NodeLoss *NodeLoss `json:"nodeLoss,omitempty"`
}

// NodeLoss is what a local tier does about volumes in use on a node that is gone.
type NodeLoss struct {
	// gracePeriod is how long a node may be NotReady (or unknown) before its volumes in use count
	// as lost; a deleted Node counts at once. Default 10m.
	// +kubebuilder:default="10m"
	// +optional
	GracePeriod *metav1.Duration `json:"gracePeriod,omitempty"`

	// deleteClaims, when true, deletes the claims bound to lost volumes (only those), so that
	// their pods are scheduled again with new claims on other nodes' volumes: Strimzi and ECK
	// then rebuild the replica from the others. Off by default: the data on the node is lost
	// with the claim, and a node that comes back would have had it.
	// +optional
	DeleteClaims bool `json:"deleteClaims,omitempty"`
}

// LocalReclaim is what happens to a local tier's Released volumes.
// +kubebuilder:validation:Enum=Recycle;Retain
type LocalReclaim string

const (
	LocalReclaimRecycle LocalReclaim = "Recycle"
	LocalReclaimRetain  LocalReclaim = "Retain"
)

// StorageTierStatus reports the volumes the operator manages for a tier.
type StorageTierStatus struct {
	// observedGeneration is the generation the status was computed from.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// conditions: Ready is True when the tier's StorageClass exists and, for a local tier,
	// every matching node and path has its PersistentVolume.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// persistentVolumes is the number of local PersistentVolumes the operator manages for this tier.
	// +optional
	PersistentVolumes int32 `json:"persistentVolumes,omitempty"`

	// capacity is the total capacity of those PersistentVolumes.
	// +optional
	Capacity *resource.Quantity `json:"capacity,omitempty"`

	// retainedPersistentVolumes names Bound volumes whose node or path left the tier: the
	// operator never deletes a Bound volume and reports it here instead.
	// +optional
	// +listType=set
	RetainedPersistentVolumes []string `json:"retainedPersistentVolumes,omitempty"`

	// releasedPersistentVolumes is the number of the tier's volumes whose claim is gone
	// (phase Released), with the data the claim left on them.
	// +optional
	ReleasedPersistentVolumes int32 `json:"releasedPersistentVolumes,omitempty"`

	// recyclingPersistentVolumes is the number of those a cleanup pod is wiping (spec.local.reclaim
	// Recycle) or will wipe again after a failed attempt.
	// +optional
	RecyclingPersistentVolumes int32 `json:"recyclingPersistentVolumes,omitempty"`

	// lostClaims names (namespace/name) the claims bound to the tier's volumes whose node is
	// gone: deleted, or NotReady for longer than spec.local.nodeLoss.gracePeriod.
	// +optional
	// +listType=set
	LostClaims []string `json:"lostClaims,omitempty"`
}

// StorageTier is a class of storage (local NVMe, SSD, HDD ...) with its speed and price, which
// AnalyticsPipelines place their data on.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,shortName=st,categories=strata
// +kubebuilder:printcolumn:name="Medium",type=string,JSONPath=`.spec.medium`
// +kubebuilder:printcolumn:name="Class",type=string,JSONPath=`.spec.storageClassName`
// +kubebuilder:printcolumn:name="Price",type=string,JSONPath=`.spec.monthlyPricePerGiB`
// +kubebuilder:printcolumn:name="Capacity",type=string,JSONPath=`.status.capacity`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type StorageTier struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   StorageTierSpec   `json:"spec"`
	Status StorageTierStatus `json:"status,omitempty"`
}

// StorageTierList is a list of StorageTiers.
// +kubebuilder:object:root=true
type StorageTierList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []StorageTier `json:"items"`
}

func init() {
	SchemeBuilder.Register(&StorageTier{}, &StorageTierList{})
}
