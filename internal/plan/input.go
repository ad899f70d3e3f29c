package plan

import (
	"regexp"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/strata-dev/strata/api/v1alpha1"
)

// Input: the API's defaults, and the validation Compute needs before it plans.

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

	if s.Elasticsearch.Replicas == nil {
		r := int32(defaultElasticsearchReplicas)
		s.Elasticsearch.Replicas = &r
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

// Validation of the input Compute relies on.
//
// The API server already rejects all of this, but Compute also runs on input that never met an
// API server (the CLI, tests, a fuzzer), and a planner that divides by a zero rate or indexes
// past a bound must fail with a message, not a panic. The bounds repeat the +kubebuilder
// validation markers; the bounds on counts and rates are also what keeps the int64 arithmetic
// below from overflowing (1e9 msgs/s × 100 MiB fits with room to spare).

var (
	maxMemoryBudget = resource.MustParse("4Ti")
	minMemoryBudget = resource.MustParse("512Mi")
	// pricePattern is the API's pattern for monthlyPricePerGiB.
	pricePattern = regexp.MustCompile(`^(0|[1-9][0-9]{0,8})(\.[0-9]{1,6})?$`)
)

func checkRange(field string, v, lo, hi int64) error {
	if v < lo || v > hi {
		return fieldErr(field, "must be between %d and %d, got %d", lo, hi, v)
	}
	return nil
}

func checkPositive(field string, q resource.Quantity) error {
	if err := checkMagnitude(field, q); err != nil {
		return err
	}
	if q.Sign() <= 0 {
		return fieldErr(field, "must be greater than 0, got %s", q.String())
	}
	return nil
}

// maxDigits bounds the quantities Compute works with: 10^30 bytes is a million yottabytes, and
// 10^-30 is far below any meaningful fraction.
const maxDigits = 30

// checkMagnitude refuses a quantity too large or too fine to compute with. A Quantity keeps a
// decimal exponent as given, so "1e999999999" is a valid Quantity; comparing it with another
// one, or turning it into a number, expands it to a billion digits and never returns. This
// check looks only at the exponent and the mantissa's length, so it must run before any other
// use of the quantity.
func checkMagnitude(field string, q resource.Quantity) *FieldError {
	c := q.DeepCopy()
	d := c.AsDec() // cheap: no rescaling
	scale := int64(d.Scale())
	digits := int64(d.UnscaledBig().BitLen())*30103/100000 + 1
	if digits-scale > maxDigits+1 || scale > maxDigits {
		return fieldErr(field, "%s is out of range: a plan works with quantities between 1e-%d and 1e%d", q.String(), maxDigits, maxDigits)
	}
	return nil
}

func checkBounds(field string, r v1alpha1.Range) error {
	if err := checkRange(field+".min", int64(r.Min), 1, 1000); err != nil {
		return err
	}
	if err := checkRange(field+".max", int64(r.Max), 1, 1000); err != nil {
		return err
	}
	if r.Min > r.Max {
		return fieldErr(field+".min", "(%d) must be less than or equal to %s.max (%d)", r.Min, field, r.Max)
	}
	return nil
}

func checkStorageRef(field string, r v1alpha1.StorageRef) error {
	if r.Tier == "" {
		return fieldErr(field+".tier", "must name a StorageTier")
	}
	return checkPositive(field+".size", r.Size)
}

// validate checks a defaulted spec; it returns the first problem found, in spec order.
func validate(s *v1alpha1.AnalyticsPipelineSpec) error {
	w, n, k, sp, es := s.Workload, s.Network, s.Kafka, s.Spark, s.Elasticsearch
	checks := []func() error{
		func() error {
			return checkRange("spec.workload.messagesPerSecond", w.MessagesPerSecond, 1, 1_000_000_000)
		},
		func() error { return checkRange("spec.workload.messageBytes", w.MessageBytes, 1, 104_857_600) },
		func() error {
			return checkRange("spec.workload.consumerMessagesPerSecond", w.ConsumerMessagesPerSecond, 0, 1_000_000_000)
		},
		func() error { return checkRange("spec.workload.producers", int64(w.Producers), 1, 10_000) },
		func() error { return checkPositive("spec.network.linkBitsPerSecond", n.LinkBitsPerSecond) },
		func() error { return checkRange("spec.network.efficiencyPercent", int64(n.EfficiencyPercent), 1, 100) },
		func() error {
			return checkRange("spec.network.targetUtilizationPercent", int64(n.TargetUtilizationPercent), 1, 100)
		},
		func() error { return checkRange("spec.kafka.replicationFactor", int64(k.ReplicationFactor), 1, 5) },
		func() error { return checkBounds("spec.kafka.brokers", k.Brokers) },
		func() error {
			if k.ReplicationFactor > k.Brokers.Max {
				return fieldErr("spec.kafka.replicationFactor", "(%d) must not exceed spec.kafka.brokers.max (%d)", k.ReplicationFactor, k.Brokers.Max)
			}
			return nil
		},
		func() error {
			if k.MinInSyncReplicas == nil {
				return nil
			}
			if err := checkRange("spec.kafka.minInSyncReplicas", int64(*k.MinInSyncReplicas), 1, 5); err != nil {
				return err
			}
			if *k.MinInSyncReplicas > k.ReplicationFactor {
				return fieldErr("spec.kafka.minInSyncReplicas", "(%d) must not exceed spec.kafka.replicationFactor (%d)", *k.MinInSyncReplicas, k.ReplicationFactor)
			}
			return nil
		},
		func() error { return checkStorageRef("spec.kafka.storage", k.Storage) },
		func() error { return checkRange("spec.kafka.topic.partitions", int64(k.Topic.Partitions), 0, 100_000) },
		func() error { return checkRange("spec.spark.executors.min", int64(sp.Executors.Min), 1, 10_000) },
		func() error { return checkRange("spec.spark.executors.max", int64(sp.Executors.Max), 1, 10_000) },
		func() error {
			if sp.Executors.Min > sp.Executors.Max {
				return fieldErr("spec.spark.executors.min", "(%d) must be less than or equal to spec.spark.executors.max (%d)", sp.Executors.Min, sp.Executors.Max)
			}
			return nil
		},
		func() error { return checkRange("spec.spark.executors.cores", int64(sp.Executors.Cores), 1, 256) },
		func() error {
			return checkRange("spec.spark.messagesPerSecondPerExecutor", sp.MessagesPerSecondPerExecutor, 1, 1_000_000_000)
		},
		func() error { return validateMemory(sp.Memory) },
		func() error {
			if sp.Shuffle.SpillTier == "" {
				return fieldErr("spec.spark.shuffle.spillTier", "must name a StorageTier")
			}
			return nil
		},
		func() error { return checkPositive("spec.spark.shuffle.spillSize", sp.Shuffle.SpillSize) },
		func() error { return checkPositive("spec.spark.shuffle.dataSize", *sp.Shuffle.DataSize) },
		func() error { return checkBounds("spec.elasticsearch.dataNodes", es.DataNodes) },
		func() error {
			return checkRange("spec.elasticsearch.messagesPerSecondPerNode", es.MessagesPerSecondPerNode, 1, 1_000_000_000)
		},
		func() error { return checkStorageRef("spec.elasticsearch.storage", es.Storage) },
		func() error { return checkRange("spec.elasticsearch.shards", int64(es.Shards), 0, 1024) },
		func() error { return checkRange("spec.elasticsearch.replicas", int64(*es.Replicas), 0, 5) },
		func() error {
			if k.Controllers != nil && k.Controllers.Storage.Size != nil {
				return checkPositive("spec.kafka.controllers.storage.size", *k.Controllers.Storage.Size)
			}
			return nil
		},
		func() error {
			if es.Masters != nil && es.Masters.Storage.Size != nil {
				return checkPositive("spec.elasticsearch.masters.storage.size", *es.Masters.Storage.Size)
			}
			return nil
		},
		func() error {
			if k.Retention != nil && k.Retention.Duration <= 0 {
				return fieldErr("spec.kafka.retention", "must be greater than 0, got %s", k.Retention.Duration)
			}
			return nil
		},
		func() error { return validateBounds(s) },
	}
	for _, c := range checks {
		if err := c(); err != nil {
			return err
		}
	}
	return nil
}

// validateMemory checks the bounds of the memory spec; whether the split leaves room for
// minHeap is the memory model's business (splitMemory).
func validateMemory(m v1alpha1.MemorySpec) error {
	if err := checkMagnitude("spec.spark.memory.budget", m.Budget); err != nil {
		return err
	}
	if err := checkMagnitude("spec.spark.memory.minHeap", *m.MinHeap); err != nil {
		return err
	}
	if m.Budget.Cmp(minMemoryBudget) <= 0 || m.Budget.Cmp(maxMemoryBudget) >= 0 {
		return fieldErr("spec.spark.memory.budget", "must be more than 512Mi and less than 4Ti, got %s", m.Budget.String())
	}
	if err := checkRange("spec.spark.memory.offHeapPercent", int64(m.OffHeapPercent), 0, 90); err != nil {
		return err
	}
	if err := checkRange("spec.spark.memory.pageCachePercent", int64(m.PageCachePercent), 0, 80); err != nil {
		return err
	}
	if m.MinHeap.Cmp(m.Budget) >= 0 {
		return fieldErr("spec.spark.memory.minHeap", "(%s) must be less than spec.spark.memory.budget (%s)", m.MinHeap.String(), m.Budget.String())
	}
	return nil
}

// validateTier checks the parts of a StorageTier the plan uses.
func validateTier(t *v1alpha1.StorageTier) error {
	s := t.Spec
	switch s.Medium {
	case v1alpha1.MediumNVMe, v1alpha1.MediumSSD, v1alpha1.MediumHDD:
	default:
		return tierErr(t.Name, "spec.medium", "must be NVMe, SSD or HDD, got %q", s.Medium)
	}
	if s.StorageClassName == "" {
		return tierErr(t.Name, "spec.storageClassName", "must not be empty")
	}
	if err := checkMagnitude("spec.readBytesPerSecond", s.ReadBytesPerSecond); err != nil {
		return tierErr(t.Name, err.Field, "%s", err.Detail)
	}
	if err := checkMagnitude("spec.writeBytesPerSecond", s.WriteBytesPerSecond); err != nil {
		return tierErr(t.Name, err.Field, "%s", err.Detail)
	}
	if s.ReadBytesPerSecond.Sign() <= 0 {
		return tierErr(t.Name, "spec.readBytesPerSecond", "must be greater than 0, got %s", s.ReadBytesPerSecond.String())
	}
	if s.WriteBytesPerSecond.Sign() <= 0 {
		return tierErr(t.Name, "spec.writeBytesPerSecond", "must be greater than 0, got %s", s.WriteBytesPerSecond.String())
	}
	if !pricePattern.MatchString(s.MonthlyPricePerGiB) {
		return tierErr(t.Name, "spec.monthlyPricePerGiB", "%q is not a decimal price such as \"0.216\"", s.MonthlyPricePerGiB)
	}
	return validateTierBounds(t)
}
