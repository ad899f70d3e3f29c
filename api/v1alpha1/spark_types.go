package v1alpha1

import "k8s.io/apimachinery/pkg/api/resource"

// The Spark job's part of AnalyticsPipelineSpec: the job, its executors, their memory budget and
// where its shuffle data and spill files go. Kept apart from analyticspipeline_types.go, which holds
// the pipeline, Kafka and Elasticsearch, because it is the largest part of the spec.

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
