package simulate

import (
	"fmt"
	"math"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/internal/plan"
)

// counts are the replicas of the three scalable resources.
type counts struct {
	Brokers, Executors, DataNodes int32
}

func countsOf(p v1alpha1.Plan) counts {
	return counts{Brokers: p.Brokers, Executors: p.Executors, DataNodes: p.ElasticsearchDataNodes}
}

// capacity is what a pipeline carries with given replicas, in records per second, from the
// plan's own stage models (plan.Compute with the counts fixed).
type capacity struct {
	// kafka is what Kafka accepts: the producers' links, the brokers' links and disks.
	kafka float64
	// job is what the job moves from Kafka into the index: its links, its processing and the
	// data nodes' indexing.
	job float64
	// brokerData is the bytes a broker holds, which a rebalance moves.
	brokerData float64
	// link is the usable bytes per second of one node's link.
	link float64
}

// model computes capacities for replica counts, caching them: a trace revisits few counts.
type model struct {
	p     *v1alpha1.AnalyticsPipeline
	tiers []v1alpha1.StorageTier
	cache map[capacityKey]capacity
}

type capacityKey struct {
	c     counts
	bytes int64
}

func newModel(p *v1alpha1.AnalyticsPipeline, tiers []v1alpha1.StorageTier) *model {
	return &model{p: p, tiers: tiers, cache: map[capacityKey]capacity{}}
}

// fixed returns the pipeline with its counts fixed to c and records of the given size.
func (m *model) fixed(c counts, bytes int64) *v1alpha1.AnalyticsPipeline {
	q := m.p.DeepCopy()
	s := &q.Spec
	s.Kafka.Brokers = v1alpha1.Range{Min: c.Brokers, Max: c.Brokers}
	s.Spark.Executors.Min, s.Spark.Executors.Max = c.Executors, c.Executors
	s.Elasticsearch.DataNodes = v1alpha1.Range{Min: c.DataNodes, Max: c.DataNodes}
	if bytes > 0 {
		s.Workload.MessageBytes = bytes
	}
	return q
}

func (m *model) capacity(c counts, bytes int64) (capacity, error) {
	key := capacityKey{c, bytes}
	if got, ok := m.cache[key]; ok {
		return got, nil
	}
	pl, err := plan.Fresh(m.fixed(c, bytes), m.tiers)
	if err != nil {
		return capacity{}, fmt.Errorf("planning %d brokers, %d executors, %d data nodes: %w",
			c.Brokers, c.Executors, c.DataNodes, err)
	}
	got := capacity{kafka: math.Inf(1), job: math.Inf(1), link: float64(pl.LinkUsableBytesPerSecond)}
	for _, s := range pl.Stages {
		v := float64(s.MaxMessagesPerSecond)
		switch s.Name {
		case v1alpha1.StageProducerNetwork, v1alpha1.StageKafkaBrokerNetwork, v1alpha1.StageKafkaDisk:
			got.kafka = math.Min(got.kafka, v)
		default:
			got.job = math.Min(got.job, v)
		}
	}
	for _, st := range pl.Storage {
		if st.Role == v1alpha1.RoleKafkaLog {
			got.brokerData = float64(st.SizePerReplica.Value())
		}
	}
	m.cache[key] = got
	return got, nil
}

// planFor is the plan for a pipeline carrying rate records per second of the given size, within
// its spec's bounds: what a static configuration sized for that rate runs.
func planFor(p *v1alpha1.AnalyticsPipeline, tiers []v1alpha1.StorageTier, rate float64, bytes int64) (v1alpha1.Plan, error) {
	q := p.DeepCopy()
	q.Spec.Workload.MessagesPerSecond = max(int64(math.Ceil(rate)), 1)
	if bytes > 0 {
		q.Spec.Workload.MessageBytes = bytes
	}
	return plan.Fresh(q, tiers)
}
