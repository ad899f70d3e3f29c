package plan

import (
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/strata-dev/strata/api/v1alpha1"
)

// The API's defaults, as declared by the +kubebuilder:default markers in api/v1alpha1. Keep the
// two in step: the API server applies the markers, Defaults applies these.
// Only the fields the plan reads are here: versions, topology keys and the like are the API
// server's business, and a second copy of them would only drift (internal/schema's tests hold
// these to the CRD).
const (
	DefaultProducers                = 1
	DefaultEfficiencyPercent        = 90
	DefaultTargetUtilizationPercent = 80
	DefaultReplicationFactor        = 3
	DefaultExecutorCores            = 1
)

// DefaultMinHeap is the default of spec.spark.memory.minHeap.
var DefaultMinHeap = resource.MustParse("1Gi")

// Defaults returns a deep copy of p with the API's defaults applied, mirroring the
// +kubebuilder:default markers, plus the "empty means" rules the field docs state
// (consumerMessagesPerSecond 0 = messagesPerSecond, dataTier "" = spillTier, dataSize unset =
// spillSize, topic name "" = the pipeline's name). Compute calls it, so that a pipeline built in
// Go, with no API server in between, plans like one the API server defaulted.
//
// Only zero values the API cannot hold after admission are defaulted. pageCachePercent is left
// alone although its marker default is 20: 0 is a legal, explicit choice ("no page-cache
// reserve"), the field is serialized without omitempty, so after the API server (or the CLI's
// schema defaulting) a zero there was written by the user, and turning it into 20 would plan
// something other than what admission validated. Go code that builds a spec by hand must set it.
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
	if k.ReplicationFactor == 0 {
		k.ReplicationFactor = DefaultReplicationFactor
	}
	if k.Topic.Name == "" {
		k.Topic.Name = p.Name
	}

	sp := &s.Spark
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
	return p
}
