package autoscale

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/internal/plan"
)

// A pipeline of 9,000-byte records, replication 2, 60 partitions: one record is 18 kB received
// in all, and a broker's 112.5 MB/s usable link takes 6,250 records/s.
const recordBytes = 9000

// pipelineReading is one reading of the whole pipeline: Kafka takes `in` records/s, the job
// processes `processed`, the lag stands at lag and moves by trend per second.
func pipelineReading(in, processed, lag, trend float64) values {
	return values{
		BrokerReceiveBytes:        in * recordBytes * 2,
		BrokerTransmitBytes:       processed*recordBytes + in*recordBytes,
		UnderReplicatedPartitions: 0,
		IngestRate:                in, ProcessingRate: processed, ConsumerLag: lag, ConsumerLagTrend: trend,
		ElasticsearchIndexingRate: processed,
	}
}

func pipelinePolicy() Policy {
	pol := testPolicy()
	pol.SparkRunning = true
	pol.Brokers = Bounds{Floor: 2, Max: 9}
	pol.Executors = Bounds{Floor: 2, Max: 12}
	pol.DataNodes = Bounds{Floor: 2, Max: 12}
	pol.CatchUp = 600 * time.Second
	return pol
}

func pipelineRun(pol Policy) *run {
	r := newRun(pol)
	r.cur.Placement = plan.PartitionPlacement{Partitions: 60, ReplicationFactor: 2}
	return r
}

// Two brokers take at most 12,500 records/s; the producers would send 20,000. The links show
// only what they carry: the demand is taken as twice it (saturatedScaleUpPercent 200), and the
// brokers, the slowest step, are asked for at the first such reading. The estimate bounds the
// demand from above, so it is sized at full capacity, not at the target: twice the brokers, not
// 2.5 times (which left a broker, and executors, to give back on every step between once and
// twice the saturated ingest). While they join, the executors and data nodes are sized in the
// same readings on what the brokers applied carry (4 × 80 % of 6,250 = 20,000 records/s),
// instead of a broker at a time and executors on the capped ingest.
func TestSaturatedIntakeSizesTheWholePipelineAtOnce(t *testing.T) {
	r := pipelineRun(pipelinePolicy())
	r.cur.Executors = 4 // they process the 12,500 at 3,125 each, under their 4,000
	r.cur.Status = &v1alpha1.AutoscalingStatus{Executors: 4}
	r.series(1, func(int) values { return pipelineReading(12500, 12500, 0, 0) })
	if got, want := r.changes(), "0s Brokers ScaleUp 2->4 IntakeSaturated"; got != want { // 25,000 at 6,250 each
		t.Fatalf("changes %q, want %q", got, want)
	}
	r.pol.Safety = BrokerSafety{Reason: "RebalanceRunning", Message: "RebalanceOnScaleUp", Joining: 2}
	r.log = nil
	for i := 1; i <= 2; i++ {
		r.read(i, pipelineReading(12500, 12500, 0, 0))
	}
	want := []string{
		"60s Executors ScaleUp 4->5 IntakeSaturated", // 20,000 at 4,000 each
		"60s ElasticsearchDataNodes ScaleUp 2->3 IndexingSaturated",
	}
	if got := r.changes(); got != strings.Join(want, "; ") {
		t.Errorf("changes:\n got %q\nwant %q", got, strings.Join(want, "; "))
	}
	if !strings.Contains(r.last.Summary, "capped by Kafka") {
		t.Errorf("the summary does not say the ingest is capped: %s", r.last.Summary)
	}
}

// A saturated intake is acted on at its first reading: the rate over $range at the link's limit
// is no noise, and the brokers' step is the slowest to carry load. A busy link below it waits
// for the whole scale-up window.
func TestSaturatedIntakeNeedsNoWindow(t *testing.T) {
	r := pipelineRun(pipelinePolicy())
	r.series(1, func(int) values { return pipelineReading(12500, 12500, 0, 0) })
	if got := r.changes(); !strings.Contains(got, "Brokers ScaleUp 2->4 IntakeSaturated") {
		t.Errorf("changes %q, want brokers 2->4 at the first saturated reading", got)
	}
	r = pipelineRun(pipelinePolicy())
	r.series(2, func(int) values { return pipelineReading(11250, 11250, 0, 0) })
	if got := r.changes(); strings.Contains(got, "Brokers") {
		t.Errorf("changes %q, want no broker change before three busy readings", got)
	}
}

// A link at 90 % of its usable rate is busy, not saturated: what it carries is the demand, and
// the brokers go to what it needs, without a probe.
func TestBusyLinkIsMeasuredNotProbed(t *testing.T) {
	r := pipelineRun(pipelinePolicy())
	r.series(3, func(int) values { return pipelineReading(11250, 11250, 0, 0) })
	if got := r.changes(); !strings.Contains(got, "Brokers ScaleUp 2->3 LinkSaturated") || strings.Contains(got, "IntakeSaturated") {
		t.Errorf("changes %q, want brokers 2->3 on the measured traffic", got)
	}
}

// While brokers join (Strimzi moves partitions onto them) the others still carry everything:
// the intake stays saturated, nothing downstream is scaled down on the capped ingest, and the
// probe asks for no more brokers than it did.
func TestNoScaleDownOnACappedIngestWhileBrokersJoin(t *testing.T) {
	pol := pipelinePolicy()
	pol.Safety = BrokerSafety{Reason: "RebalanceRunning", Message: "RebalanceOnScaleUp", Joining: 3}
	r := pipelineRun(pol)
	r.cur.Brokers, r.cur.Executors, r.cur.DataNodes = 5, 8, 4
	r.cur.Status = &v1alpha1.AutoscalingStatus{Brokers: 5, Executors: 8, ElasticsearchDataNodes: 4}
	r.series(40, func(int) values { return pipelineReading(12500, 12500, 0, 0) })
	if got := r.changes(); got != "" {
		t.Errorf("changes %q, want none while the brokers join", got)
	}
}

// As partitions move onto joining brokers, each move takes some of the old brokers' load, and
// the capped ingest rises at every reading. The step up that answers the saturation is on its
// way: the demand is what the brokers applied keep, what they carry at the scale-down
// utilization (5 × 70 % of 6,250 = 21,875), not each reading's ingest multiplied again, which asked for one more broker and
// more executors at nearly every reading.
func TestRisingIngestWhileBrokersJoinAsksForNothingMore(t *testing.T) {
	pol := pipelinePolicy()
	pol.Safety = BrokerSafety{Reason: "RebalanceRunning", Message: "RebalanceOnScaleUp", Joining: 3}
	r := pipelineRun(pol)
	r.cur.Brokers, r.cur.Executors, r.cur.DataNodes = 5, 8, 8
	r.cur.Status = &v1alpha1.AutoscalingStatus{Brokers: 5, Executors: 8, ElasticsearchDataNodes: 8}
	r.series(40, func(i int) values {
		in := 12500 + 2500*float64(i)/39 // the two old brokers' links stay full
		return pipelineReading(in, in, 0, 0)
	})
	if got := r.changes(); got != "" {
		t.Errorf("changes %q, want none: the brokers joining keep the 21,875 the step is sized for", got)
	}
	if !strings.Contains(r.last.Summary, "while brokers join, so the demand is taken as the 21875 they keep") {
		t.Errorf("the summary does not say what the demand is taken as: %s", r.last.Summary)
	}
}

// Strimzi writes the Kafka's status when a reconciliation ends, after the new brokers' pods are
// ready: for those minutes nothing reports them joining, and the two old brokers' saturated
// links read, spread over five, as a light load. A scale-up that no auto-rebalance has ended
// since is still on its way: nothing scales down on that reading; one Strimzi never reports on
// is not waited on beyond pendingScaleUpBound.
func TestScaleUpStrimziHasNotReportedHoldsScaleDowns(t *testing.T) {
	for _, c := range []struct {
		name       string
		ago        time.Duration
		rebalances bool
		want       string
	}{
		{"just scaled up", time.Minute, true, ""},
		{"scaled up long ago", pendingScaleUpBound, true, "Executors ScaleDown 8->5"},
		// No auto-rebalance status: nothing would ever report the brokers joining.
		{"Strimzi reports no auto-rebalance", time.Minute, false, "Executors ScaleDown 8->5"},
	} {
		pol := pipelinePolicy()
		pol.ScaleDownDelay = 0
		pol.Safety = BrokerSafety{Settled: t0.Add(-2 * time.Hour), Rebalances: c.rebalances}
		r := pipelineRun(pol)
		r.cur.Brokers, r.cur.Executors, r.cur.DataNodes = 5, 8, 8
		up := t0.Add(-c.ago)
		r.cur.Status = &v1alpha1.AutoscalingStatus{Brokers: 5, Executors: 8, ElasticsearchDataNodes: 8,
			Windows: []v1alpha1.AutoscalingWindow{{Resource: v1alpha1.ResourceBrokers, LastScaleUp: &metav1.Time{Time: up}}}}
		r.series(20, func(int) values { return pipelineReading(12500, 12500, 0, 0) }) // ten minutes
		if got := r.changes(); !strings.Contains(got, c.want) || (c.want == "" && got != "") {
			t.Errorf("%s: changes %q, want %q", c.name, got, c.want)
		}
	}
}

// Once added brokers carry traffic, the producers send what waited, at all Kafka takes: within
// the catch-up time that is no reason for more brokers, which would only arrive after it.
func TestBacklogFlushAfterBrokersJoinProbesNoFurther(t *testing.T) {
	pol := pipelinePolicy()
	r := pipelineRun(pol)
	r.cur.Brokers, r.cur.Executors, r.cur.DataNodes = 5, 8, 4
	up := t0.Add(-time.Hour)
	r.cur.Status = &v1alpha1.AutoscalingStatus{Brokers: 5, Executors: 8, ElasticsearchDataNodes: 4,
		Windows: []v1alpha1.AutoscalingWindow{{Resource: v1alpha1.ResourceBrokers, LastScaleUp: &metav1.Time{Time: up}}}}
	r.pol.Safety = BrokerSafety{Settled: t0.Add(-time.Minute)}
	r.series(8, func(int) values { return pipelineReading(31250, 31250, 0, 0) })
	if got := r.changes(); strings.Contains(got, "Brokers") {
		t.Errorf("changes %q: brokers scaled while the producers' backlog flushed", got)
	}
	// The executors carry the flush at full capacity (31,250 at 4,000 each: 8): a flush is a
	// catch-up, and executors sized for it at the target would stand idle once it is sent.
	if got := r.changes(); strings.Contains(got, "Executors") {
		t.Errorf("changes %q: executors scaled for the flush", got)
	}
	// After the catch-up time the saturation is probed again: to the 8 brokers a demand at
	// least 31,250 keeps (probeBrokers), not doubled to 9 (the max).
	r.pol.Safety.Settled = t0.Add(-time.Hour)
	r.log = nil
	r.series(3, func(int) values { return pipelineReading(31250, 31250, 0, 0) })
	if got := r.changes(); !strings.Contains(got, "Brokers ScaleUp 5->8 IntakeSaturated") {
		t.Errorf("changes %q, want the probe to 8", got)
	}
}

// Brokers a probe added settled a quarter of an hour ago, past the catch-up time, and the
// intake is saturated again: a backlog longer to send than the catch-up time, or demand, which
// cannot be told apart. The ingest is taken as the demand at the target (31,250 records/s at
// 80 % of 6,250 each: 7 brokers), not doubled again (62,500: 9, the max), which took the
// backlog for demand and gave the brokers back half an hour later (own/step-x3.5, issue 28).
// Past the scale-down delay, the saturation is probed again, to the 8 brokers a demand at least
// 31,250 keeps (probeBrokers), not doubled to 9.
func TestSaturatedAgainAfterAProbeIsMeasured(t *testing.T) {
	for _, c := range []struct {
		settled time.Duration
		want    string
	}{
		{15 * time.Minute, "Brokers ScaleUp 5->7 IntakeSaturated"},
		{time.Hour, "Brokers ScaleUp 5->8 IntakeSaturated"},
	} {
		pol := pipelinePolicy()
		pol.ScaleDownDelay = 30 * time.Minute
		r := pipelineRun(pol)
		r.cur.Brokers, r.cur.Executors, r.cur.DataNodes = 5, 8, 8
		up := t0.Add(-c.settled - 10*time.Minute)
		r.cur.Status = &v1alpha1.AutoscalingStatus{Brokers: 5, Executors: 8, ElasticsearchDataNodes: 8,
			Windows: []v1alpha1.AutoscalingWindow{{Resource: v1alpha1.ResourceBrokers, LastScaleUp: &metav1.Time{Time: up}}}}
		r.pol.Safety = BrokerSafety{Settled: t0.Add(-c.settled), Rebalances: true}
		r.series(3, func(int) values { return pipelineReading(31250, 31250, 0, 0) })
		if got := r.changes(); !strings.Contains(got, c.want) {
			t.Errorf("settled %s ago: changes %q, want %q", c.settled, got, c.want)
		}
	}
}

// The probe of a saturated intake goes to the brokers a demand at least the saturated ingest
// keeps at the scale-down utilization (70 % of 6,250 records/s each), and at least two more
// than carry it: doubling 3 saturated brokers made 6 where a step 1.07 times their ingest keeps
// 5, and one was given back (own/step-x2-3brokers). saturatedScaleUpPercent stays the bound.
func TestProbeLeavesNoBrokerToGiveBack(t *testing.T) {
	for _, c := range []struct {
		brokers int32
		percent float64
		want    string
	}{
		{2, 2, "Brokers ScaleUp 2->4 IntakeSaturated"},   // 12,500 keeps 3; two join
		{3, 2, "Brokers ScaleUp 3->5 IntakeSaturated"},   // 18,750 keeps 5, not 6
		{4, 2, "Brokers ScaleUp 4->6 IntakeSaturated"},   // 25,000 keeps 6, not 8
		{2, 1.5, "Brokers ScaleUp 2->3 IntakeSaturated"}, // the spec's 150 % carries 18,750 on 3
	} {
		pol := pipelinePolicy()
		pol.SaturatedFactor = c.percent
		r := pipelineRun(pol)
		r.cur.Brokers = c.brokers
		in := 6250 * float64(c.brokers) // every link full
		r.series(1, func(int) values { return pipelineReading(in, in, 0, 0) })
		if got := r.changes(); !strings.Contains(got, c.want) {
			t.Errorf("%d brokers saturated, %.0f %%: changes %q, want %q", c.brokers, 100*c.percent, got, c.want)
		}
	}
}

// While the brokers a probe added join, the job is sized on what they keep (4 × 70 % of 6,250
// = 17,500 records/s and the lag's drain: 5 executors), not on what they carry at the target
// (20,000 and the drain: 6), which a step 1.08 times the saturated ingest gave back half an hour
// later (own/step-x1.5). Once scaled up in that phase, the job is not scaled up again on the
// ingest rising as partitions move (it held the backlog: executors 5, 6, 7, 8 on own/step-x3.5).
func TestBrokersJoiningSizeTheJobOnWhatTheyKeep(t *testing.T) {
	pol := pipelinePolicy()
	pol.Safety = BrokerSafety{Reason: "RebalanceRunning", Message: "RebalanceOnScaleUp", Joining: 2}
	r := pipelineRun(pol)
	r.cur.Brokers, r.cur.Executors, r.cur.DataNodes = 4, 3, 3
	up := &metav1.Time{Time: t0.Add(-time.Minute)}
	r.cur.Status = &v1alpha1.AutoscalingStatus{Brokers: 4, Executors: 3, ElasticsearchDataNodes: 3,
		Windows: []v1alpha1.AutoscalingWindow{{Resource: v1alpha1.ResourceBrokers, LastScaleUp: up, LastChange: up}}}
	r.series(3, func(int) values { return pipelineReading(12500, 12000, 60000, 500) }) // 100/s to drain
	if got, want := r.changes(), "60s Executors ScaleUp 3->5 IntakeSaturated"; !strings.Contains(got, want) {
		t.Fatalf("changes %q, want %q", got, want)
	}
	if !strings.Contains(r.last.Summary, "the demand is taken as the 17500 they keep") {
		t.Errorf("the summary does not say what the demand is taken as: %s", r.last.Summary)
	}
	r.cur.Executors, r.log = 5, nil
	r.series(40, func(i int) values { // past the cool-down, the ingest rising to 24,000
		in := 12500 + 11500*float64(i)/39
		return pipelineReading(in, 20000, 60000+20000*float64(i), 4000)
	})
	if got := r.changes(); strings.Contains(got, "Executors ScaleUp") {
		t.Errorf("changes %q, want no second executor step while the brokers join", got)
	}
}

// No scale-down within the scale-down delay of a scale-up, however long the stabilisation
// window has asked for less; at the delay's end it goes ahead.
func TestNoScaleDownSoonAfterAScaleUp(t *testing.T) {
	pol := testPolicy()
	pol.ScaleDownDelay = 30 * time.Minute
	r := newRun(pol)
	r.series(3, func(int) values { return brokers(400 * mb) })
	r.series(100, func(i int) values {
		if i < 3 {
			return brokers(400 * mb)
		}
		return brokers(100 * mb)
	})
	got := r.changes()
	if !strings.HasPrefix(got, "60s Brokers ScaleUp 3->5 LinkSaturated; ") {
		t.Fatalf("changes %q, want a scale-up first", got)
	}
	if !strings.Contains(got, "1860s Brokers ScaleDown 5->3 LinkUnderused") {
		t.Errorf("changes %q, want the scale-down at 1860s: 30 minutes after the scale-up", got)
	}
}

// Executors sized for the demand and the lag's drain within catchUpSeconds: a longer catch-up
// time asks for fewer executors.
func TestCatchUpTimeSizesTheDrain(t *testing.T) {
	for _, c := range []struct {
		catchUp time.Duration
		want    string
	}{{120 * time.Second, "Executors ScaleUp 4->9"}, {1200 * time.Second, "Executors ScaleUp 4->5"}} {
		pol := testPolicy()
		pol.SparkRunning = true
		pol.CatchUp = c.catchUp
		r := newRun(pol)
		// 15,000 arriving and 2.4 million waiting: 15,000 + 20,000/s or + 2,000/s to drain
		// at 4,000 each, or 15,000 at 80 % of it.
		r.series(3, func(i int) values {
			return values{IngestRate: 15000, ProcessingRate: 14000, ConsumerLag: 2.4e6, ConsumerLagTrend: 1000}
		})
		if got := r.changes(); !strings.Contains(got, c.want) {
			t.Errorf("catch-up %s: changes %q, want %s", c.catchUp, got, c.want)
		}
	}
}

// StrimziSafety reads the brokers still joining from the Kafka's auto-rebalance status, and when
// the last auto-rebalance ended.
func TestStrimziSafetyJoiningAndSettled(t *testing.T) {
	kafka := func(status map[string]any) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": "sensors"}, "status": status}}
	}
	joining := StrimziSafety(kafka(map[string]any{"autoRebalance": map[string]any{
		"state": "RebalanceOnScaleUp", "lastTransitionTime": "2026-01-01T12:00:00Z",
		"modes": []any{map[string]any{"mode": "add-brokers", "brokers": []any{int64(3), int64(4), int64(5)}}},
	}}), nil, nil)
	if joining.Joining != 3 || joining.Reason != "RebalanceRunning" || !joining.Settled.IsZero() {
		t.Errorf("during a scale-up's rebalance: %+v, want 3 joining, RebalanceRunning, not settled", joining)
	}
	idle := StrimziSafety(kafka(map[string]any{"autoRebalance": map[string]any{
		"state": "Idle", "lastTransitionTime": "2026-01-01T12:30:00Z"}}), nil, nil)
	if idle.Joining != 0 || idle.Reason != "" || !idle.Settled.Equal(time.Date(2026, 1, 1, 12, 30, 0, 0, time.UTC)) {
		t.Errorf("after it: %+v, want nothing joining, settled at 12:30", idle)
	}
	// Brokers added in the last reconciliation wait in the add-brokers mode, Idle, for the
	// auto-rebalancing step: they carry nothing yet.
	queued := StrimziSafety(kafka(map[string]any{"autoRebalance": map[string]any{
		"state": "Idle", "lastTransitionTime": "2026-01-01T12:30:00Z",
		"modes": []any{map[string]any{"mode": "add-brokers", "brokers": []any{int64(3), int64(4)}}},
	}}), nil, nil)
	if queued.Joining != 2 || queued.Reason != "" || !queued.Rebalances {
		t.Errorf("with brokers queued to join: %+v, want 2 joining, nothing holding a scale-down by reason", queued)
	}
}
