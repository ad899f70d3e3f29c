package cli

import (
	"math"
	"testing"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/internal/desired"
	"github.com/strata-dev/strata/internal/plan"
	"github.com/strata-dev/strata/internal/testutil/gen"
)

// The time one broker more takes to carry its share, on the sample traces' pipeline's plan (2
// brokers, 60 partitions of 2 replicas, 1 Gbit/s links), worked by hand:
//   - a broker keeps at most 60 × (1,966,923,648 + 2 × 245,865,456) = 147.52 GB;
//   - the third takes a third of both old brokers' data: 98.35 GB;
//   - the throttle is the one of the plan with 3 brokers: the link's 112.5 MB/s less the busier
//     direction's 30.09 MB/s, 82.41 MB/s, less what 5 partitions moving at once are written
//     while Kafka takes 12,461 records/s of 9,028 B over 60 partitions (9.37 MB/s): 73.03 MB/s;
//   - so 1,346.6 s.
func TestPlanBrokerJoin(t *testing.T) {
	spec := v1alpha1.AnalyticsPipelineSpec{
		Workload: v1alpha1.WorkloadSpec{MessagesPerSecond: 5000, MessageBytes: 9028},
		Kafka:    v1alpha1.KafkaSpec{ReplicationFactor: 2, Brokers: v1alpha1.Range{Min: 2, Max: 8}},
	}
	base := func() v1alpha1.Plan {
		return v1alpha1.Plan{
			Brokers: 2, Partitions: 60, IngestBytesPerSecond: 45_140_000, LinkUsableBytesPerSecond: 112_500_000,
			BrokerReceiveBytesPerSecond: 45_140_000, BrokerSendBytesPerSecond: 45_140_000,
			BrokerDiskWriteBytesPerSecond: 45_140_000,
			Stages: []v1alpha1.StageCapacity{
				// The producers' links are not the brokers': lower, and left out.
				{Name: v1alpha1.StageProducerNetwork, MaxMessagesPerSecond: 10_000},
				{Name: v1alpha1.StageKafkaBrokerNetwork, MaxMessagesPerSecond: 12_461},
				{Name: v1alpha1.StageKafkaDisk, MaxMessagesPerSecond: 77_536},
			},
			Retention: v1alpha1.RetentionPlan{KafkaRetentionBytes: 1_966_923_648, KafkaSegmentBytes: 245_865_456},
		}
	}
	// The plan with one broker more: the same topic and load on 3 brokers.
	next := base()
	next.Brokers, next.BrokerReceiveBytesPerSecond, next.BrokerSendBytesPerSecond = 3, 30_093_333, 30_093_333
	cases := []struct {
		name                         string
		plan                         func(*v1alpha1.Plan)
		next                         v1alpha1.Plan
		ok                           bool
		intake                       int64
		perBroker, moved, rate, secs float64
	}{
		{name: "at retention.bytes", plan: func(*v1alpha1.Plan) {}, next: next, ok: true, intake: 12_461,
			perBroker: 147.519e9, moved: 98.346e9, rate: 73.032e6, secs: 1346.6},
		{name: "retention.ms keeps less: 10 minutes of 45.14 MB/s and the segments",
			plan: func(p *v1alpha1.Plan) { p.Retention.KafkaRetentionMs = 600_000 }, next: next, ok: true, intake: 12_461,
			perBroker: 56.588e9, moved: 37.725e9, rate: 73.032e6, secs: 516.6},
		{name: "no plan with one broker more: no move", plan: func(*v1alpha1.Plan) {}, ok: true, intake: 12_461,
			perBroker: 147.519e9},
		{name: "no retention planned", plan: func(p *v1alpha1.Plan) { p.Retention = v1alpha1.RetentionPlan{} }},
		{name: "no brokers' stage", plan: func(p *v1alpha1.Plan) { p.Stages = p.Stages[:1] }},
		{name: "no brokers", plan: func(p *v1alpha1.Plan) { p.Brokers = 0 }},
	}
	near := func(got, want float64) bool { return math.Abs(got-want) <= 1e-3*math.Abs(want) }
	for _, c := range cases {
		pl := base()
		c.plan(&pl)
		j, ok := planBrokerJoin(spec, pl, c.next)
		if ok != c.ok {
			t.Errorf("%s: ok %v, want %v", c.name, ok, c.ok)
			continue
		}
		if !ok {
			continue
		}
		if j.intake != c.intake || !near(j.perBroker, c.perBroker) || !near(j.moved, c.moved) ||
			!near(j.rate, c.rate) || !near(j.Seconds(), c.secs) {
			t.Errorf("%s: intake %d, a broker keeps %.4g B, moves %.4g B at %.4g B/s in %.1f s; want %d, %.4g, %.4g, %.4g, %.1f",
				c.name, j.intake, j.perBroker, j.moved, j.rate, j.Seconds(), c.intake, c.perBroker, c.moved, c.rate, c.secs)
		}
	}
}

func TestMinutes(t *testing.T) {
	for _, c := range []struct {
		s    float64
		want string
	}{{45, "45 s"}, {1696, "28.3 min"}, {5399, "90 min"}, {9000, "2.5 h"}} {
		if got := minutes(c.s); got != c.want {
			t.Errorf("minutes(%g) = %q, want %q", c.s, got, c.want)
		}
	}
}

// The plan with one broker more is the operator's own for that count, with the topic's
// partitions kept; at the maximum there is none.
func TestNextBrokerPlan(t *testing.T) {
	p := gen.Pipeline(gen.SetBrokers(2, 4))
	tiers := gen.APITiers()
	pl, err := plan.Fresh(p, tiers)
	if err != nil {
		t.Fatal(err)
	}
	next, ok := nextBrokerPlan(p, tiers, pl)
	if !ok || next.Brokers != pl.Brokers+1 || next.Partitions != pl.Partitions {
		t.Fatalf("next plan: ok %v, %d brokers and %d partitions; want %d and %d", ok, next.Brokers, next.Partitions,
			pl.Brokers+1, pl.Partitions)
	}
	if desired.RebalanceThrottle(next) <= desired.RebalanceThrottle(pl) {
		t.Errorf("the throttle with one broker more, %d, is not above %d: each broker carries less",
			desired.RebalanceThrottle(next), desired.RebalanceThrottle(pl))
	}
	p.Spec.Kafka.Brokers.Max = pl.Brokers
	if _, ok := nextBrokerPlan(p, tiers, pl); ok {
		t.Errorf("a next plan beyond spec.kafka.brokers.max %d", pl.Brokers)
	}
}
