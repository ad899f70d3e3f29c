package plan

import (
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/strata-dev/strata/api/v1alpha1"
)

// The API's defaults, as declared by the +kubebuilder:default markers in api/v1alpha1. Keep the
// two in step: the API server applies the markers, Defaults applies these.
const (
	DefaultProducers                = 1
	DefaultEfficiencyPercent        = 90
	DefaultTargetUtilizationPercent = 80
	DefaultReplicationFactor        = 3
	DefaultExecutorCores            = 1
	DefaultKafkaVersion             = "4.1.0"
	DefaultRackTopologyKey          = "kubernetes.io/hostname"
	DefaultSparkVersion             = "4.0.1"
	DefaultElasticsearchVersion     = "8.19.0"
	DefaultMasterNodes              = 3
	DefaultVolumeReclaimPolicy      = "Retain"
	DefaultAutoscalingInterval      = 30
)

// DefaultMinHeap is the default of spec.spark.memory.minHeap.
var DefaultMinHeap = resource.MustParse("1Gi")

// Defaults returns a deep copy of p with the API's defaults applied, mirroring the
// +kubebuilder:default markers, plus the "empty means" rules the field docs state
// (consumerMessagesPerSecond 0 = messagesPerSecond, dataTier "" = spillTier, dataSize unset =
// spillSize, topic name "" = the pipeline's name). Compute calls it, so a pipeline read from a
// file with no API server in between plans exactly like one the API server defaulted.
//
// Only zero values the API cannot hold after admission are defaulted. A field whose zero is a
// legal, explicit choice is left alone even when its marker default differs:
// pageCachePercent (default 20, but 0 means "no page-cache reserve") and
// autoscaling.scaleDownStabilizationSeconds (default 300, but 0 means "no window"). Those two are
// serialized without omitempty, so after the API server (or the CLI's schema defaulting) a zero
// there was written by the user; turning it into the default would plan something else than
// what admission validated.
//
// Partitions and shards stay 0 ("auto"): the plan fills them in, because they depend on the
// executor and data node counts it chooses.
func Defaults(p *v1alpha1.AnalyticsPipeline) *v1alpha1.AnalyticsPipeline {
	p = p.DeepCopy()
	s := &p.Spec

	w := &s.Workload
	if w.ConsumerMessagesPerSecond == 0 {
		w.ConsumerMessagesPerSecond = w.MessagesPerSecond
	}
	if w.Producers == 0 {
		w.Producers = DefaultProducers
	}

	n := &s.Network
	if n.EfficiencyPercent == 0 {
		n.EfficiencyPercent = DefaultEfficiencyPercent
	}
	if n.TargetUtilizationPercent == 0 {
		n.TargetUtilizationPercent = DefaultTargetUtilizationPercent
	}

	k := &s.Kafka
	if k.Version == "" {
		k.Version = DefaultKafkaVersion
	}
	if k.ReplicationFactor == 0 {
		k.ReplicationFactor = DefaultReplicationFactor
	}
	if k.RackTopologyKey == "" {
		k.RackTopologyKey = DefaultRackTopologyKey
	}
	if k.Topic.Name == "" {
		k.Topic.Name = p.Name
	}

	sp := &s.Spark
	if sp.SparkVersion == "" {
		sp.SparkVersion = DefaultSparkVersion
	}
	if sp.Executors.Cores == 0 {
		sp.Executors.Cores = DefaultExecutorCores
	}
	if sp.Memory.MinHeap == nil {
		h := DefaultMinHeap.DeepCopy()
		sp.Memory.MinHeap = &h
	}
	if sp.Shuffle.DataTier == "" {
		sp.Shuffle.DataTier = sp.Shuffle.SpillTier
	}
	if sp.Shuffle.DataSize == nil {
		d := sp.Shuffle.SpillSize.DeepCopy()
		sp.Shuffle.DataSize = &d
	}

	es := &s.Elasticsearch
	if es.Version == "" {
		es.Version = DefaultElasticsearchVersion
	}
	if es.MasterNodes == 0 {
		es.MasterNodes = DefaultMasterNodes
	}

	if s.Autoscaling != nil && s.Autoscaling.IntervalSeconds == 0 {
		s.Autoscaling.IntervalSeconds = DefaultAutoscalingInterval
	}
	if s.VolumeReclaimPolicy == "" {
		s.VolumeReclaimPolicy = DefaultVolumeReclaimPolicy
	}
	return p
}
