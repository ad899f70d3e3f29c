package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// AutoscalingSpec configures the metric-driven autoscaler.
// +kubebuilder:validation:XValidation:rule="!self.enabled || (has(self.prometheusURL) && size(self.prometheusURL) > 0)",message="spec.autoscaling.prometheusURL is required when autoscaling is enabled"
type AutoscalingSpec struct {
	// enabled turns the autoscaler on.
	// +kubebuilder:default=false
	// +optional
	Enabled bool `json:"enabled"`
	// prometheusURL is the Prometheus HTTP API the autoscaler queries.
	// +kubebuilder:validation:MaxLength=2048
	// It must parse, use http or https, name a host, and carry no user:password (a URL is
	// printed in messages and logs; which hosts are allowed is the operator's access policy).
	// +kubebuilder:validation:XValidation:rule="self == '' || (isURL(self) && (url(self).getScheme() == 'http' || url(self).getScheme() == 'https') && url(self).getHostname() != '' && !self.matches('^[A-Za-z][A-Za-z0-9+.-]*://[^/?#]*@'))",message="spec.autoscaling.prometheusURL must be an http or https URL with a host and without user:password"
	// +optional
	PrometheusURL string `json:"prometheusURL,omitempty"`
	// intervalSeconds is how often metrics are read and a decision is made.
	// +kubebuilder:validation:Minimum=5
	// +kubebuilder:validation:Maximum=3600
	// +kubebuilder:default=30
	// +optional
	IntervalSeconds int32 `json:"intervalSeconds,omitempty"`
	// scrapeIntervalSeconds is how often Prometheus scrapes the pipeline's metrics (30 s in
	// kube-prometheus-stack and in the monitors Strata ships). The rate window of the queries,
	// $range, is four times the longer of this and intervalSeconds: rate() needs two samples in
	// its window, and a window of four scrapes tolerates a missed one.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=3600
	// +kubebuilder:default=30
	// +optional
	ScrapeIntervalSeconds int32 `json:"scrapeIntervalSeconds,omitempty"`
	// scaleDownStabilizationSeconds is how long a lower recommendation must hold before the
	// autoscaler scales down (Kubernetes' HPA waits 300 s).
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=86400
	// +kubebuilder:default=300
	// +optional
	ScaleDownStabilizationSeconds int32 `json:"scaleDownStabilizationSeconds,omitempty"`
	// brokerScaleDownStabilizationSeconds is how long a lower broker recommendation must hold
	// before a broker leaves, when longer than scaleDownStabilizationSeconds: a broker that
	// starts to leave cannot be asked back, since Strimzi carries the remove-brokers rebalance
	// to its end whatever the pool asks for meanwhile, and a broker kept after all stays
	// without its partitions (docs/autoscaling.md). The default is the half hour a change
	// counts as reversed in.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=86400
	// +kubebuilder:default=1800
	// +optional
	BrokerScaleDownStabilizationSeconds *int32 `json:"brokerScaleDownStabilizationSeconds,omitempty"`
	// cooldownSeconds is how long the autoscaler leaves a resource alone after changing it, so
	// that the change shows in the metrics (partitions moved, executors started) before the
	// next decision. A change of executors or of the memory split resubmits the Spark job.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=86400
	// +kubebuilder:default=120
	// +optional
	CooldownSeconds *int32 `json:"cooldownSeconds,omitempty"`
	// scaleDownDelayAfterScaleUpSeconds is how long after scaling a resource up the autoscaler
	// scales it down at the earliest, whatever the stabilisation window (the cluster
	// autoscaler's scale-down-delay-after-add): a load that asked for capacity and then paused
	// would otherwise have it taken away and asked back, resubmitting the Spark job or moving
	// Kafka partitions twice.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=86400
	// +kubebuilder:default=1800
	// +optional
	ScaleDownDelayAfterScaleUpSeconds *int32 `json:"scaleDownDelayAfterScaleUpSeconds,omitempty"`
	// catchUpSeconds is how soon a consumer lag must be drained: the autoscaler sizes the
	// executors and data nodes to carry the ingest within the target utilization and, at full
	// capacity, the ingest plus lag ÷ catchUpSeconds (docs/autoscaling.md).
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=86400
	// +kubebuilder:default=600
	// +optional
	CatchUpSeconds int32 `json:"catchUpSeconds,omitempty"`
	// saturatedScaleUpPercent is how far a saturated stage is scaled up in one step when its
	// demand cannot be measured, in percent of what it carries now: a saturated link shows only
	// what it carries, so the demand behind it is taken to be this share of it until the stage
	// is no longer saturated, and then the measured need holds (200 doubles it, as the HPA's
	// default scale-up policy and TCP's slow start do). For brokers it is an upper bound: they
	// go to what a demand at least their saturated ingest keeps, and at least two more
	// (docs/autoscaling.md). It must be over 100: a factor of 1 or less would never relieve
	// the stage.
	// +kubebuilder:validation:Minimum=101
	// +kubebuilder:validation:Maximum=1000
	// +kubebuilder:default=200
	// +optional
	SaturatedScaleUpPercent int32 `json:"saturatedScaleUpPercent,omitempty"`
	// queries overrides the PromQL the autoscaler reads each signal with. Empty fields keep the
	// defaults, written for kube-prometheus-stack (cAdvisor), Strimzi's JMX and Kafka exporters
	// and the Elasticsearch exporter. A query may use the placeholders $namespace, $pipeline,
	// $topic, $sparkApplication, $brokerPods and $executorPods (regular expressions matching the
	// pod names) and
	// $range (four times the longer of intervalSeconds and scrapeIntervalSeconds, as a PromQL
	// duration). Each query is parsed by the operator: a
	// query that does not parse stops the autoscaler with reason InvalidQuery, naming the field.
	// +optional
	Queries *AutoscalingQueries `json:"queries,omitempty"`
}

// AutoscalingQueries holds one PromQL query per signal. A query must return one sample or
// samples without labels the autoscaler needs: several samples are summed.
type AutoscalingQueries struct {
	// brokerTransmitBytes: bytes per second all broker pods send (to consumers and followers).
	// +kubebuilder:validation:MaxLength=4096
	// +optional
	BrokerTransmitBytes string `json:"brokerTransmitBytes,omitempty"`
	// brokerReceiveBytes: bytes per second all broker pods receive (from producers and leaders).
	// +kubebuilder:validation:MaxLength=4096
	// +optional
	BrokerReceiveBytes string `json:"brokerReceiveBytes,omitempty"`
	// kafkaBytesIn: bytes per second the brokers take in as Kafka counts them (client and
	// replication traffic); used for the link when the pods' network metrics are missing.
	// +kubebuilder:validation:MaxLength=4096
	// +optional
	KafkaBytesIn string `json:"kafkaBytesIn,omitempty"`
	// kafkaBytesOut: bytes per second the brokers send as Kafka counts them.
	// +kubebuilder:validation:MaxLength=4096
	// +optional
	KafkaBytesOut string `json:"kafkaBytesOut,omitempty"`
	// underReplicatedPartitions: partitions with fewer in-sync replicas than replicas; no
	// broker leaves while it is above 0 or unknown.
	// +kubebuilder:validation:MaxLength=4096
	// +optional
	UnderReplicatedPartitions string `json:"underReplicatedPartitions,omitempty"`
	// consumerLag: records the job's consumer group is behind on the topic.
	// +kubebuilder:validation:MaxLength=4096
	// +optional
	ConsumerLag string `json:"consumerLag,omitempty"`
	// consumerLagTrend: how fast the lag grows, in records per second (negative: draining).
	// +kubebuilder:validation:MaxLength=4096
	// +optional
	ConsumerLagTrend string `json:"consumerLagTrend,omitempty"`
	// processingRate: records per second the job consumes.
	// +kubebuilder:validation:MaxLength=4096
	// +optional
	ProcessingRate string `json:"processingRate,omitempty"`
	// ingestRate: records per second the producers append to the topic.
	// +kubebuilder:validation:MaxLength=4096
	// +optional
	IngestRate string `json:"ingestRate,omitempty"`
	// executorPageCacheBytes: page cache of one executor pod (the average over executors).
	// +kubebuilder:validation:MaxLength=4096
	// +optional
	ExecutorPageCacheBytes string `json:"executorPageCacheBytes,omitempty"`
	// executorFileRefaults: file pages per second the executors read again soon after the
	// kernel evicted them — the sign that their page cache is too small. cAdvisor exports it
	// from v0.60 (Kubernetes 1.37+, cgroup v2); without it, disk reads while the page cache is
	// full stand in.
	// +kubebuilder:validation:MaxLength=4096
	// +optional
	ExecutorFileRefaults string `json:"executorFileRefaults,omitempty"`
	// executorDiskReadBytes: bytes per second the executors read from disk.
	// +kubebuilder:validation:MaxLength=4096
	// +optional
	ExecutorDiskReadBytes string `json:"executorDiskReadBytes,omitempty"`
	// executorSpillBytes: bytes per second the executors spill to disk. Spark keeps its spill
	// counter inside each executor, so the default estimates it: the executors' disk writes
	// (cAdvisor) less the shuffle bytes Spark reports through the driver.
	// +kubebuilder:validation:MaxLength=4096
	// +optional
	ExecutorSpillBytes string `json:"executorSpillBytes,omitempty"`
	// elasticsearchIndexingRate: documents per second Elasticsearch indexes, every shard copy
	// counted (the exporter must run with --es.all to see every node).
	// +kubebuilder:validation:MaxLength=4096
	// +optional
	ElasticsearchIndexingRate string `json:"elasticsearchIndexingRate,omitempty"`
}

// Autoscaled resources, as status.autoscaling names them.
const (
	ResourceBrokers                = "Brokers"
	ResourceExecutors              = "Executors"
	ResourceElasticsearchDataNodes = "ElasticsearchDataNodes"
	ResourceMemorySplit            = "MemorySplit"
)

// Autoscaling actions.
const (
	ActionScaleUp   = "ScaleUp"
	ActionScaleDown = "ScaleDown"
	// ActionShift moves the executors' memory split toward page cache or toward off-heap.
	ActionShift = "Shift"
	// ActionBlocked: a change was due but a safety rule held it back.
	ActionBlocked = "Blocked"
)

// AutoscalingStatus is what the autoscaler decided, and the little state its stabilisation
// windows and cool-downs need, so that a restarted operator carries on where it stopped.
type AutoscalingStatus struct {
	// brokers is the broker count the autoscaler asks for; the plan uses at least this many.
	// +optional
	Brokers int32 `json:"brokers,omitempty"`
	// executors is the executor count the autoscaler asks for; the plan uses at least this many.
	// +optional
	Executors int32 `json:"executors,omitempty"`
	// elasticsearchDataNodes is the data node count the autoscaler asks for.
	// +optional
	ElasticsearchDataNodes int32 `json:"elasticsearchDataNodes,omitempty"`
	// pageCachePercent is the executors' page-cache share the autoscaler set, in place of
	// spec.spark.memory.pageCachePercent.
	// +optional
	PageCachePercent *int32 `json:"pageCachePercent,omitempty"`
	// offHeapPercent is the off-heap share the autoscaler set, in place of
	// spec.spark.memory.offHeapPercent.
	// +optional
	OffHeapPercent *int32 `json:"offHeapPercent,omitempty"`
	// messagesPerSecondPerExecutor is the processing capacity of one executor as measured, in
	// place of spec.spark.messagesPerSecondPerExecutor.
	// +optional
	MessagesPerSecondPerExecutor int64 `json:"messagesPerSecondPerExecutor,omitempty"`
	// lastDecision is the autoscaler's latest change, or the latest change a safety rule held back.
	// +optional
	LastDecision *AutoscalingDecision `json:"lastDecision,omitempty"`
	// windows holds each resource's recent recommendations, for the stabilisation windows.
	// +optional
	// +listType=map
	// +listMapKey=resource
	// +kubebuilder:validation:MaxItems=4
	Windows []AutoscalingWindow `json:"windows,omitempty"`
	// readings are the intake's latest readings, oldest first: the ingest and the brokers'
	// received bytes as the default queries read them (rates over $range). Against the readings
	// of a steady intake before it, a rise tells what the intake carries since the rise, before
	// the rate over the whole range shows it (see docs/autoscaling.md, "A step seen early").
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=16
	Readings []AutoscalingReading `json:"readings,omitempty"`
}

// AutoscalingReading is one reading of Kafka's intake.
type AutoscalingReading struct {
	// time is when the reading was taken.
	Time metav1.Time `json:"time"`
	// ingestRate is the records per second reaching Kafka, over $range.
	IngestRate int64 `json:"ingestRate"`
	// receiveBytes is the bytes per second the brokers received in all, over $range.
	ReceiveBytes int64 `json:"receiveBytes"`
}

// AutoscalingDecision is one decision of the autoscaler.
type AutoscalingDecision struct {
	// resource is Brokers, Executors, ElasticsearchDataNodes or MemorySplit.
	Resource string `json:"resource"`
	// action is ScaleUp, ScaleDown, Shift or Blocked.
	Action string `json:"action"`
	// from and to are the counts (for MemorySplit: the page-cache percent) before and after.
	From int32 `json:"from"`
	To   int32 `json:"to"`
	// reason is a CamelCase word: LinkSaturated, LagGrowing, UnderReplicatedPartitions, ...
	Reason string `json:"reason"`
	// message explains the decision with the figures it was made from.
	Message string `json:"message"`
	// time is when the decision was made.
	Time metav1.Time `json:"time"`
}

// AutoscalingWindow is one resource's recent recommendations. Consecutive readings that
// recommend the same are kept once, so the list grows only when the recommendation changes.
type AutoscalingWindow struct {
	// resource is Brokers, Executors, ElasticsearchDataNodes or MemorySplit.
	Resource string `json:"resource"`
	// lastReading is when the resource's signals were last read with fresh samples; a gap of
	// more than two intervals starts the window afresh.
	// +optional
	LastReading *metav1.Time `json:"lastReading,omitempty"`
	// lastChange is when the autoscaler last changed the resource (the start of its cool-down).
	// +optional
	LastChange *metav1.Time `json:"lastChange,omitempty"`
	// lastScaleUp is when the autoscaler last scaled the resource up: no scale-down follows
	// within spec.autoscaling.scaleDownDelayAfterScaleUpSeconds of it.
	// +optional
	LastScaleUp *metav1.Time `json:"lastScaleUp,omitempty"`
	// lastScaleDown is when the autoscaler last scaled the resource down: a scale-up less than
	// 30 minutes after it reverses it.
	// +optional
	LastScaleDown *metav1.Time `json:"lastScaleDown,omitempty"`
	// scaleDownHoldSeconds, when longer than spec.autoscaling.scaleDownStabilizationSeconds, is
	// how long a lower recommendation must hold before the resource scales down: learned from
	// a reversal, it is the load's cycle the autoscaler followed (from the scale-up before the
	// reversed scale-down to the scale-up that reversed it) plus 30 minutes, so that a load
	// that falls and rises again as it did keeps its capacity. The scale-down it allows clears
	// it (docs/autoscaling.md).
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=86400
	ScaleDownHoldSeconds int32 `json:"scaleDownHoldSeconds,omitempty"`
	// samples are the recommendations from the oldest still needed to the latest; each holds
	// from its time until the next one's.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=64
	Samples []AutoscalingSample `json:"samples,omitempty"`
}

// AutoscalingSample is what one reading recommended.
type AutoscalingSample struct {
	// time is when the reading was taken.
	Time metav1.Time `json:"time"`
	// up is the count that keeps the signal within the target (for MemorySplit: the page-cache
	// percent the reading asks for).
	Up int32 `json:"up"`
	// down is the count that keeps it within the target less the hysteresis margin: a scale-down
	// goes no lower, so that the count it leaves is not at once too few again.
	Down int32 `json:"down"`
}
