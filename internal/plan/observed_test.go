package plan_test

import (
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/internal/plan"
	"github.com/strata-dev/strata/internal/testutil/gen"
)

// stepping is a pipeline whose spec alone plans few brokers (RF 1, one broker allowed), so that
// a running pool of more is a scale-down for plan.Compute to step.
func stepping(t *testing.T) (*v1alpha1.AnalyticsPipeline, v1alpha1.Plan) {
	t.Helper()
	p := gen.Pipeline(gen.SetProducers(2))
	p.Spec.Kafka.ReplicationFactor = 1
	p.Spec.Kafka.Brokers = v1alpha1.Range{Min: 1, Max: 6}
	p.Spec.Workload.MessagesPerSecond = 2000
	fresh, err := plan.Fresh(p, gen.APITiers())
	if err != nil {
		t.Fatal(err)
	}
	if fresh.Brokers != 1 {
		t.Fatalf("the spec plans %d brokers, want 1: the cases below step down to it", fresh.Brokers)
	}
	return p, fresh
}

// exactly is p's plan with exactly n brokers: what a step of a scale-down was planned as before
// plan.Compute decided steps (the spec's bounds forced to n), which its step must still equal.
func exactly(t *testing.T, p *v1alpha1.AnalyticsPipeline, n int32) v1alpha1.Plan {
	t.Helper()
	q := p.DeepCopy()
	q.Spec.Kafka.Brokers.Min, q.Spec.Kafka.Brokers.Max = n, max(q.Spec.Kafka.Brokers.Max, n)
	pl, err := plan.Fresh(q, gen.APITiers())
	if err != nil {
		t.Fatal(err)
	}
	return pl
}

// TestComputeStepsBrokersDown: brokers leave one at a time, only when Strimzi may remove one,
// and the last but one only once a KafkaRebalance has emptied it; growth is applied at once.
// Every step is planned whole for the brokers that run during it.
func TestComputeStepsBrokersDown(t *testing.T) {
	p, fresh := stepping(t)
	busy := plan.BrokerSafety{Reason: "ScaleDownInProgress", Message: "KafkaNodePool sensors-broker still runs 6 brokers for 5 replicas"}
	cases := []struct {
		name  string
		pool  plan.BrokerPool
		want  int32
		note  string // a part of the brokers note; "" when none
		empty []int32
	}{
		{name: "no pool yet", want: 1},
		{name: "the pool has what the plan wants", pool: plan.BrokerPool{Replicas: 1}, want: 1},
		{name: "one step down", pool: plan.BrokerPool{Replicas: 4}, want: 3,
			note: "brokers step down one at a time: 3 now, 1 planned"},
		{name: "held while Strimzi scales down", pool: plan.BrokerPool{Replicas: 4, Safety: busy}, want: 4,
			note: "brokers stay at 4 (1 planned) until Strimzi may remove one: ScaleDownInProgress: KafkaNodePool sensors-broker"},
		{name: "two to one, node IDs unknown", pool: plan.BrokerPool{Replicas: 2}, want: 2,
			note: "brokers stay at 2 (1 planned) while Strimzi has not reported the broker pool's node IDs"},
		{name: "two to one, the last broker not emptied yet",
			pool: plan.BrokerPool{Replicas: 2, NodeIDs: []int32{3, 4}, Removal: "sensors-kafka-remove-brokers"}, want: 2,
			note: "while KafkaRebalance sensors-kafka-remove-brokers moves broker 4's partitions off", empty: []int32{4}},
		{name: "two to one, the removal refused for now: still asked for, and said",
			pool: plan.BrokerPool{Replicas: 2, NodeIDs: []int32{3, 4}, Removal: "sensors-kafka-remove-brokers",
				RemovalState: "NotReady: Kafka cluster is not Ready"}, want: 2,
			note: "moves broker 4's partitions off (Strimzi refuses Cruise Control with one broker, so the pool goes to one only " +
				"once that broker is empty); Strimzi reports it NotReady: Kafka cluster is not Ready; the operator asks Strimzi to " +
				"try it again (strimzi.io/rebalance=refresh) a minute after it ended",
			empty: []int32{4}},
		{name: "two to one, another broker emptied",
			pool: plan.BrokerPool{Replicas: 2, NodeIDs: []int32{3, 4}, Emptied: []int32{3}}, want: 2,
			note: "moves broker 4's partitions off", empty: []int32{4}},
		{name: "two to one, the last broker emptied",
			// The step is the plan: nothing to note.
			pool: plan.BrokerPool{Replicas: 2, NodeIDs: []int32{3, 4}, Emptied: []int32{4}}, want: 1},
	}
	// Brokers asked back while one leaves: Strimzi carries the removal to its end, so the pool
	// grows once it is done.
	grows := func(min int32) *v1alpha1.AnalyticsPipeline {
		g := p.DeepCopy()
		g.Spec.Kafka.Brokers.Min = min
		return g
	}
	for _, c := range []struct {
		name  string
		p     *v1alpha1.AnalyticsPipeline
		pool  plan.BrokerPool
		want  int32
		note  string
		empty []int32
	}{
		{name: "grown while Strimzi removes a broker: held", p: grows(4),
			pool: plan.BrokerPool{Replicas: 2, NodeIDs: []int32{0, 1, 2}, Leaving: 1}, want: 2,
			note: "brokers stay at 2 (4 planned) while Strimzi removes 1 broker(s): it carries a removal to its end"},
		{name: "grown once it has", p: grows(4), pool: plan.BrokerPool{Replicas: 2, NodeIDs: []int32{0, 1}}, want: 4},
		{name: "grown while the last broker but one is emptied: the removal goes on", p: grows(2),
			pool: plan.BrokerPool{Replicas: 2, NodeIDs: []int32{3, 4}, Removal: "sensors-kafka-remove-brokers",
				RemovalState: "Rebalancing", RemovalRunning: true, Leaving: 1}, want: 2,
			note: "Strimzi does not stop a KafkaRebalance that is deleted, so it is carried to its end", empty: []int32{4}},
		{name: "grown when the last broker but one is empty: the pool lets it go first", p: grows(2),
			pool: plan.BrokerPool{Replicas: 2, NodeIDs: []int32{3, 4}, Emptied: []int32{4}}, want: 1,
			note: "brokers go to 1 (2 planned): broker 4 is empty"},
		{name: "grown when the last broker but one is empty, Strimzi busy: it waits, kept known as empty", p: grows(2),
			pool: plan.BrokerPool{Replicas: 2, NodeIDs: []int32{3, 4}, Emptied: []int32{4}, Safety: busy}, want: 2,
			note:  "brokers stay at 2 (2 planned): broker 4 is empty and leaves once Strimzi may remove one: ScaleDownInProgress",
			empty: []int32{4}},
	} {
		r, err := plan.Compute(c.p, gen.APITiers(), plan.Observed{Brokers: c.pool})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if r.Plan.Brokers != c.want || !strings.Contains(r.Notes.Brokers, c.note) || (c.note == "") != (r.Notes.Brokers == "") {
			t.Errorf("%s: %d brokers, note %q; want %d, a note with %q", c.name, r.Plan.Brokers, r.Notes.Brokers, c.want, c.note)
		}
		if !reflect.DeepEqual(r.EmptyBrokers, c.empty) {
			t.Errorf("%s: empty brokers %v, want %v", c.name, r.EmptyBrokers, c.empty)
		}
	}
	for _, c := range cases {
		r, err := plan.Compute(p, gen.APITiers(), plan.Observed{Brokers: c.pool})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if r.Plan.Brokers != c.want {
			t.Errorf("%s: %d brokers, want %d", c.name, r.Plan.Brokers, c.want)
		}
		if (c.note == "") != (r.Notes.Brokers == "") || !strings.Contains(r.Notes.Brokers, c.note) {
			t.Errorf("%s: brokers note %q, want one with %q", c.name, r.Notes.Brokers, c.note)
		}
		if !reflect.DeepEqual(r.EmptyBrokers, c.empty) {
			t.Errorf("%s: empty brokers %v, want %v", c.name, r.EmptyBrokers, c.empty)
		}
		want := fresh
		if c.want != fresh.Brokers {
			want = exactly(t, p, c.want)
			want.TargetBrokers = fresh.Brokers // the step says where it heads
		}
		if !reflect.DeepEqual(r.Plan, want) {
			t.Errorf("%s: the step's plan is not the plan of %d brokers:\n got %+v\nwant %+v", c.name, c.want, r.Plan, want)
		}
	}

	// Growth is applied at once, held back by nothing.
	grow := p.DeepCopy()
	grow.Spec.Kafka.Brokers.Min = 5
	r, err := plan.Compute(grow, gen.APITiers(), plan.Observed{Brokers: plan.BrokerPool{Replicas: 2, Safety: busy}})
	if err != nil || r.Plan.Brokers != 5 || r.Notes.Brokers != "" {
		t.Errorf("growth from 2 to 5 while Strimzi is busy: %d brokers, note %q (%v); want 5 at once", r.Plan.Brokers, r.Notes.Brokers, err)
	}
}

// TestComputeTakesTheAutoscalersTargets: a target raises its count within the spec's maximum
// and never lowers it; the measured rate and memory split replace the spec's; with autoscaling
// off the targets are ignored.
func TestComputeTakesTheAutoscalersTargets(t *testing.T) {
	p := gen.Pipeline(gen.SetProducers(2), gen.SetAutoscaling(v1alpha1.AutoscalingSpec{Enabled: true, IntervalSeconds: 5}))
	spec, err := plan.Fresh(p, gen.APITiers())
	if err != nil {
		t.Fatal(err)
	}
	st := &v1alpha1.AutoscalingStatus{Brokers: 9, Executors: 1, ElasticsearchDataNodes: spec.ElasticsearchDataNodes + 1,
		MessagesPerSecondPerExecutor: 3000, PageCachePercent: ptr(int32(30)), OffHeapPercent: ptr(int32(50))}
	r, err := plan.Compute(p, gen.APITiers(), plan.Observed{Autoscaling: st})
	if err != nil {
		t.Fatal(err)
	}
	got := r.Plan
	if got.Brokers != p.Spec.Kafka.Brokers.Max {
		t.Errorf("%d brokers: a target above the maximum is held at %d", got.Brokers, p.Spec.Kafka.Brokers.Max)
	}
	if got.ElasticsearchDataNodes != st.ElasticsearchDataNodes {
		t.Errorf("%d data nodes, want the target %d", got.ElasticsearchDataNodes, st.ElasticsearchDataNodes)
	}
	if got.Executors < spec.Executors {
		t.Errorf("%d executors: a target of 1 lowered the spec's plan of %d", got.Executors, spec.Executors)
	}
	if p.Spec.Kafka.Brokers.Min != 2 || p.Spec.Spark.MessagesPerSecondPerExecutor != 4000 {
		t.Error("Compute changed its argument")
	}
	// The same decision without its counts plans like the measured spec (plan.Measured).
	measured, err := plan.Fresh(plan.Measured(p, st), gen.APITiers())
	if err != nil {
		t.Fatal(err)
	}
	if measured.ExecutorMemory.PageCache == spec.ExecutorMemory.PageCache {
		t.Errorf("the measured split 30%% planned the page cache of the spec's 25%%: the case proves nothing")
	}
	noCounts := *st
	noCounts.Brokers, noCounts.Executors, noCounts.ElasticsearchDataNodes = 0, 0, 0
	if r, err := plan.Compute(p, gen.APITiers(), plan.Observed{Autoscaling: &noCounts}); err != nil || !reflect.DeepEqual(r.Plan, measured) {
		t.Errorf("targets without counts: %+v (%v), want the measured spec's plan", r.Plan, err)
	}

	off := p.DeepCopy()
	off.Spec.Autoscaling.Enabled = false
	if r, err := plan.Compute(off, gen.APITiers(), plan.Observed{Autoscaling: st}); err != nil || !reflect.DeepEqual(r.Plan, spec) {
		t.Errorf("autoscaling off: %+v (%v), want the spec's plan", r.Plan, err)
	}
}

// TestComputeNotes: the quorum and partitions notes PlanValid gives, word for word.
func TestComputeNotes(t *testing.T) {
	p, fresh := stepping(t)
	r, err := plan.Compute(p, gen.APITiers(), plan.Observed{KafkaControllers: 3, Partitions: 60})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"the KRaft quorum keeps the 3 controller(s) the cluster was created with, although a new cluster of 1 broker(s) " +
			"would get 1: Strimzi runs only static quorums (re-create the Kafka cluster to change it)",
		"the topic keeps its 60 partitions although the plan would choose " + strconv.Itoa(int(fresh.Partitions)) +
			": Kafka cannot remove partitions",
	}
	if got := r.Notes.List(); !reflect.DeepEqual(got, want) {
		t.Errorf("notes\n got %q\nwant %q", got, want)
	}
	if r.Plan.Partitions != 60 {
		t.Errorf("%d partitions, want the topic's 60", r.Plan.Partitions)
	}
	// A quorum a new cluster would get, and a topic with no more than the plan's: no notes.
	r, err = plan.Compute(p, gen.APITiers(), plan.Observed{KafkaControllers: 1, Partitions: fresh.Partitions})
	if err != nil || r.Notes.String() != "" {
		t.Errorf("notes %q (%v), want none", r.Notes.String(), err)
	}
}
