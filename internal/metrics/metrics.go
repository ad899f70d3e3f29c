package metrics

import (
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/internal/desired"
)

// Resources of strata_pipeline_replicas, named as the autoscaler names them in its decisions
// (status.autoscaling and strata_autoscaler_decisions_total's resource label).
const (
	ResourceBrokers                = "Brokers"
	ResourceExecutors              = "Executors"
	ResourceElasticsearchDataNodes = "ElasticsearchDataNodes"
)

var resources = []string{ResourceBrokers, ResourceExecutors, ResourceElasticsearchDataNodes}

// Description documents one metric: its name, help, labels (namespace and pipeline first) and
// what sets it. docs/metrics.md is checked against the Descriptions.
type Description struct {
	Name   string
	Help   string
	Labels []string
	// Observed marks the metrics the autoscaler sets (SetBrokerLinkUtilization,
	// SetExecutorPageCacheRatio) rather than Observe.
	Observed bool
}

// Metric names.
const (
	Info                       = "strata_pipeline_info"
	WorkloadMessages           = "strata_pipeline_workload_messages_per_second"
	WorkloadBytes              = "strata_pipeline_workload_bytes_per_second"
	StageCapacity              = "strata_pipeline_stage_capacity_messages_per_second"
	MaxMessages                = "strata_pipeline_max_messages_per_second"
	Bottleneck                 = "strata_pipeline_bottleneck_info"
	LinkUsable                 = "strata_pipeline_link_usable_bytes_per_second"
	TargetUtilization          = "strata_pipeline_target_utilization_ratio"
	BrokerPlannedBytes         = "strata_pipeline_broker_planned_bytes_per_second"
	Replicas                   = "strata_pipeline_replicas"
	ReplicasMin                = "strata_pipeline_replicas_min"
	ReplicasMax                = "strata_pipeline_replicas_max"
	ExecutorMemory             = "strata_pipeline_executor_memory_bytes"
	StorageBytes               = "strata_pipeline_storage_bytes"
	StorageMonthlyCost         = "strata_pipeline_storage_monthly_cost"
	SingleTierMonthlyCost      = "strata_pipeline_storage_single_tier_monthly_cost"
	Condition                  = "strata_pipeline_condition"
	AutoscalingEnabled         = "strata_pipeline_autoscaling_enabled"
	BrokerLinkUtilization      = "strata_pipeline_broker_link_utilization_ratio"
	ExecutorPageCacheRatio     = "strata_pipeline_executor_page_cache_ratio"
	AutoscalerDecisions        = "strata_autoscaler_decisions_total" // defined in internal/autoscale/prometheus, registered by cmd/manager
	pipelineLabels             = "namespace,pipeline"
	infoLabels                 = "topic,kafka_cluster,broker_podset,spark_application,elasticsearch_cluster"
	storageLabels              = "role,tier,storageclass"
	defaultCurrencyDescription = "currency units of the tiers' monthlyPricePerGiB"
)

// Descriptions lists every metric the Recorder publishes, in the order of docs/metrics.md.
func Descriptions() []Description {
	d := func(name, help, extra string) Description {
		labels := strings.Split(pipelineLabels, ",")
		if extra != "" {
			labels = append(labels, strings.Split(extra, ",")...)
		}
		return Description{Name: name, Help: help, Labels: labels}
	}
	observed := func(x Description) Description { x.Observed = true; return x }
	return []Description{
		d(Info, "A pipeline Strata manages (1), with the names of its children: the topic, the Strimzi cluster, "+
			"the broker pods' StrimziPodSet (pods are <broker_podset>-<id>), the SparkApplication and the Elasticsearch cluster.", infoLabels),
		d(WorkloadMessages, "The ingest the pipeline must carry (spec.workload.messagesPerSecond).", ""),
		d(WorkloadBytes, "The ingest in bytes per second (messagesPerSecond x messageBytes).", ""),
		d(StageCapacity, "What each stage carries at 100% of its usable resources, as planned.", "stage"),
		d(MaxMessages, "What the pipeline carries: its smallest stage capacity.", ""),
		d(Bottleneck, "The stage the plan names as the bottleneck (1); stage=\"None\" when every stage carries the workload within the target utilization.", "stage"),
		d(LinkUsable, "One node's usable link rate: linkBitsPerSecond / 8 x efficiency.", ""),
		d(TargetUtilization, "The planning headroom: spec.network.targetUtilizationPercent / 100.", ""),
		d(BrokerPlannedBytes, "What the plan expects one broker to receive, send and write to disk.", "direction"),
		d(Replicas, "Planned replicas of each scaled resource (Brokers, Executors, ElasticsearchDataNodes).", "resource"),
		d(ReplicasMin, "The spec's lower bound of each scaled resource.", "resource"),
		d(ReplicasMax, "The spec's upper bound of each scaled resource: the autoscaler goes no higher.", "resource"),
		d(ExecutorMemory, "Each executor pod's memory split: heap, offHeap, overhead, pageCache and pod (the limit).", "part"),
		d(StorageBytes, "Planned storage of each role on its tier: size per replica x replicas.", storageLabels),
		d(StorageMonthlyCost, "Monthly cost of each role's storage, in the "+defaultCurrencyDescription+".", storageLabels),
		d(SingleTierMonthlyCost, "What the same storage would cost a month on the fastest tier the pipeline names.", ""),
		d(Condition, "Each status condition: 1 when True, 0 when False or Unknown, with its reason.", "type,reason"),
		d(AutoscalingEnabled, "1 when spec.autoscaling.enabled, else 0.", ""),
		observed(d(BrokerLinkUtilization, "The busiest broker's link use as the autoscaler last observed it: the "+
			"busier direction of the broker holding the most partitions (of the cluster's received and sent bytes per second), over the usable link rate.", "")),
		observed(d(ExecutorPageCacheRatio, "The executors' page cache as the autoscaler last observed it, over the planned "+
			"page-cache reserve (below 1: the reserve is not filled, or is taken by other memory).", "")),
	}
}

// Default is the operator's Recorder, which the controllers record on (Observe, Forget and
// the Set functions below). Nothing serves it until cmd/manager's metrics endpoint does
// (Handler, through its metricsFilter), so importing this package registers nothing:
// a test or a tool that imports it serves no strata_pipeline_* series it did not ask for, and
// a test that reads them registers Default on a registry of its own. cmd/manager also has its
// Forget remove the autoscaler's decisions of the pipeline (ForgetAlso with
// strata_autoscaler_decisions_total, which internal/autoscale/prometheus defines).
var Default = NewUnregistered()

// Observe publishes p's plan, bounds and conditions on the Default recorder.
func Observe(p *v1alpha1.AnalyticsPipeline) { Default.Observe(p) }

// Forget removes every series of the pipeline namespace/name from the Default recorder.
func Forget(namespace, name string) { Default.Forget(namespace, name) }

// ForgetAlso makes Forget remove the pipeline's series from vec too: for metrics other packages
// register with the labels namespace and pipeline (the autoscaler's decisions counter).
func ForgetAlso(vec PartialDeleter) { Default.ForgetAlso(vec) }

// SetBrokerLinkUtilization records, for the autoscaler, the busiest broker's link use as last
// observed: the busier direction of the broker holding the most partitions
// (plan.PartitionPlacement, from the cluster's received and sent bytes per second), over the usable link
// rate (status.plan.linkUsableBytesPerSecond), a ratio where 1 is a saturated link. The series
// stays until the next call or until the pipeline is forgotten.
func SetBrokerLinkUtilization(namespace, name string, ratio float64) {
	Default.setObserved(BrokerLinkUtilization, namespace, name, ratio)
}

// SetExecutorPageCacheRatio records, for the autoscaler, the executors' page cache as last
// observed (the average over executors of container_memory_cache) over the planned page-cache
// reserve (status.plan.executorMemory.pageCache): below 1 the reserve is not used, well below
// 1 with high disk reads the page cache is starved.
func SetExecutorPageCacheRatio(namespace, name string, ratio float64) {
	Default.setObserved(ExecutorPageCacheRatio, namespace, name, ratio)
}

// samples computes every series Observe sets for p.
func samples(p *v1alpha1.AnalyticsPipeline) []sample {
	var out []sample
	add := func(family string, value float64, labels ...string) {
		out = append(out, sample{family: family, labels: labels, value: value})
	}
	add(Info, 1, desired.TopicName(p), desired.KafkaName(p),
		strings.TrimSuffix(desired.BrokerPodPrefix(p), "-"), desired.SparkApplicationName(p), desired.ElasticsearchName(p))
	add(WorkloadMessages, float64(p.Spec.Workload.MessagesPerSecond))
	add(WorkloadBytes, float64(p.Spec.Workload.MessagesPerSecond)*float64(p.Spec.Workload.MessageBytes))
	enabled := 0.0
	if p.Spec.Autoscaling != nil && p.Spec.Autoscaling.Enabled {
		enabled = 1
	}
	add(AutoscalingEnabled, enabled)
	bounds := map[string]v1alpha1.Range{
		ResourceBrokers:                p.Spec.Kafka.Brokers,
		ResourceExecutors:              {Min: p.Spec.Spark.Executors.Min, Max: p.Spec.Spark.Executors.Max},
		ResourceElasticsearchDataNodes: p.Spec.Elasticsearch.DataNodes,
	}
	for _, res := range resources {
		add(ReplicasMin, float64(bounds[res].Min), res)
		add(ReplicasMax, float64(bounds[res].Max), res)
	}
	for _, c := range p.Status.Conditions {
		v := 0.0
		if c.Status == "True" {
			v = 1
		}
		add(Condition, v, c.Type, c.Reason)
	}
	pl := p.Status.Plan
	if pl == nil {
		return out
	}
	for _, s := range pl.Stages {
		add(StageCapacity, float64(s.MaxMessagesPerSecond), s.Name)
	}
	add(MaxMessages, float64(pl.MaxMessagesPerSecond))
	if pl.Bottleneck != "" {
		add(Bottleneck, 1, pl.Bottleneck)
	}
	add(LinkUsable, float64(pl.LinkUsableBytesPerSecond))
	if pl.LinkUsableBytesPerSecond > 0 {
		add(TargetUtilization, float64(pl.LinkPlannedBytesPerSecond)/float64(pl.LinkUsableBytesPerSecond))
	}
	add(BrokerPlannedBytes, float64(pl.BrokerReceiveBytesPerSecond), "receive")
	add(BrokerPlannedBytes, float64(pl.BrokerSendBytesPerSecond), "send")
	add(BrokerPlannedBytes, float64(pl.BrokerDiskWriteBytesPerSecond), "diskWrite")
	planned := map[string]int32{
		ResourceBrokers:                pl.Brokers,
		ResourceExecutors:              pl.Executors,
		ResourceElasticsearchDataNodes: pl.ElasticsearchDataNodes,
	}
	for _, res := range resources {
		add(Replicas, float64(planned[res]), res)
	}
	m := pl.ExecutorMemory
	for _, part := range []struct {
		name string
		q    resource.Quantity
	}{{"heap", m.Heap}, {"offHeap", m.OffHeap}, {"overhead", m.Overhead}, {"pageCache", m.PageCache}, {"pod", m.Pod}} {
		if !part.q.IsZero() {
			add(ExecutorMemory, float64(part.q.Value()), part.name)
		}
	}
	storage := append([]v1alpha1.StoragePlacement(nil), pl.Storage...)
	sort.Slice(storage, func(i, j int) bool { return storage[i].Role < storage[j].Role })
	for _, s := range storage {
		add(StorageBytes, float64(s.SizePerReplica.Value())*float64(s.Replicas), s.Role, s.Tier, s.StorageClassName)
		if cost, ok := money(s.MonthlyCost); ok {
			add(StorageMonthlyCost, cost, s.Role, s.Tier, s.StorageClassName)
		}
	}
	if cost, ok := money(pl.SingleTierMonthlyStorageCost); ok {
		add(SingleTierMonthlyCost, cost)
	}
	return out
}

// money parses a decimal string of the plan ("371.52").
func money(s string) (float64, bool) {
	if s == "" {
		return 0, false
	}
	var f float64
	if _, err := fmt.Sscanf(s, "%g", &f); err != nil {
		return 0, false
	}
	return f, true
}
