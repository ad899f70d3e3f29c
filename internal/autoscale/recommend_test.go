package autoscale

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/internal/plan"
)

// The tests below replay recorded series: one reading every interval, each a set of signal
// values, through Recommend, feeding its status back and applying its targets the way the
// operator's plan does (the count is the larger of the floor and the target).

var t0 = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

const mb = 1e6

// testPolicy is the sample pipeline's: a 1 Gbit/s link at 90 % efficiency (112.5 MB/s usable)
// planned at 80 %, so 90 MB/s per broker; 3..6 brokers, 4..10 executors, 2..6 data nodes.
func testPolicy() Policy {
	return Policy{
		Interval:                 30 * time.Second,
		Stabilization:            300 * time.Second,
		Cooldown:                 120 * time.Second,
		LinkUsableBytesPerSecond: 112_500_000,
		TargetUtilizationPercent: 80,
		Brokers:                  Bounds{Floor: 3, Max: 6},
		Executors:                Bounds{Floor: 4, Max: 10},
		DataNodes:                Bounds{Floor: 2, Max: 6},
		SpecPerExecutor:          4000,
		PerDataNode:              8000,
		Memory: v1alpha1.MemorySpec{Budget: resource.MustParse("16Gi"), PageCachePercent: 20, OffHeapPercent: 50,
			MinHeap: ptr.To(resource.MustParse("2Gi"))},
	}
}

// values is one reading's signals.
type values map[Signal]float64

// broker traffic: the busier direction, all brokers together; no under-replicated partitions.
func brokers(bytesPerSecond float64) values {
	return values{BrokerTransmitBytes: bytesPerSecond, BrokerReceiveBytes: bytesPerSecond * 0.8, UnderReplicatedPartitions: 0}
}

// run replays readings from t0, one per interval, and returns what changed and when.
type run struct {
	pol     Policy
	cur     State
	restart bool // round-trip the status through JSON between readings, as a restarted operator reads it
	log     []string
	// decisions are every change made, in order.
	decisions []v1alpha1.AutoscalingDecision
	last      Decision
}

func newRun(pol Policy) *run {
	return &run{pol: pol, cur: State{Brokers: pol.Brokers.Floor, Executors: pol.Executors.Floor,
		DataNodes: pol.DataNodes.Floor, PageCachePercent: 20, OffHeapPercent: 50, PerExecutor: pol.SpecPerExecutor}}
}

func (r *run) read(i int, v values) Decision {
	now := t0.Add(time.Duration(i) * r.pol.Interval)
	obs := Observations{Samples: map[Signal]Sample{}}
	for s, x := range v {
		obs.Samples[s] = Sample{Value: x, Time: now}
	}
	d := Recommend(r.cur, obs, r.pol, now)
	r.decisions = append(r.decisions, d.Changes...)
	for _, c := range d.Changes {
		r.log = append(r.log, fmt.Sprintf("%ds %s %s %d->%d %s", i*int(r.pol.Interval/time.Second), c.Resource, c.Action, c.From, c.To, c.Reason))
	}
	st := d.Status
	if r.restart {
		data, err := json.Marshal(st)
		if err != nil {
			panic(err)
		}
		st = v1alpha1.AutoscalingStatus{}
		if err := json.Unmarshal(data, &st); err != nil {
			panic(err)
		}
	}
	r.cur.Status = &st
	r.cur.Brokers = max(r.pol.Brokers.Floor, st.Brokers)
	r.cur.Executors = max(r.pol.Executors.Floor, st.Executors)
	r.cur.DataNodes = max(r.pol.DataNodes.Floor, st.ElasticsearchDataNodes)
	if st.PageCachePercent != nil {
		r.cur.PageCachePercent, r.cur.OffHeapPercent = *st.PageCachePercent, *st.OffHeapPercent
	}
	if st.MessagesPerSecondPerExecutor > 0 {
		r.cur.PerExecutor = st.MessagesPerSecondPerExecutor
	}
	r.last = d
	return d
}

// series replays n readings of f(i).
func (r *run) series(n int, f func(i int) values) *run {
	for i := 0; i < n; i++ {
		r.read(i, f(i))
	}
	return r
}

func (r *run) changes() string { return strings.Join(r.log, "; ") }

func TestRecommendBrokers(t *testing.T) {
	steady := func(bps float64) func(int) values { return func(int) values { return brokers(bps) } }
	cases := []struct {
		name    string
		start   int32 // the broker target the status starts with (0: the floor)
		pol     func(*Policy)
		n       int
		series  func(i int) values
		want    string
		restart bool
		place   plan.PartitionPlacement // the applied plan's partitions (none: the even split)
	}{
		{name: "whole partitions: 260 MB/s fits 3 brokers on average, but 10 partitions give one of them 4 leaders (104 MB/s)",
			n: 6, series: steady(260 * mb), place: plan.PartitionPlacement{Partitions: 10, ReplicationFactor: 3},
			want: "60s Brokers ScaleUp 3->4 LinkSaturated"},
		{name: "whole partitions: 12 partitions divide by 3, so 260 MB/s stays on 3",
			n: 6, series: steady(260 * mb), place: plan.PartitionPlacement{Partitions: 12, ReplicationFactor: 3}, want: ""},
		{name: "saturation scales up at the third reading, once the scale-up window is full",
			n: 6, series: steady(400 * mb), want: "60s Brokers ScaleUp 3->5 LinkSaturated"},
		{name: "a saturated Kafka counter scales up when the network metrics are missing",
			n: 3, series: func(int) values { return values{KafkaBytesOut: 400 * mb, KafkaBytesIn: 100 * mb} },
			want: "60s Brokers ScaleUp 3->5 LinkSaturated"},
		{name: "noise: single spikes and dips around a steady load do nothing",
			n: 40, series: func(i int) values {
				switch i % 3 {
				case 0:
					return brokers(600 * mb)
				case 1:
					return brokers(50 * mb)
				}
				return brokers(250 * mb)
			}, want: ""},
		{name: "one step: a scale-up goes straight to the measured need (2000 MB/s at 90 MB/s each), bounded by max",
			n: 12, series: steady(2000 * mb), pol: func(p *Policy) { p.Brokers = Bounds{Floor: 2, Max: 30} },
			want: "60s Brokers ScaleUp 2->23 LinkSaturated"},
		{name: "bounds: never above the spec's max",
			n: 20, series: steady(2000 * mb), want: "60s Brokers ScaleUp 3->6 LinkSaturated"},
		{name: "scale-down only after the stabilisation window, and not below the floor",
			start: 6, n: 14, series: steady(100 * mb), want: "300s Brokers ScaleDown 6->3 LinkUnderused"},
		{name: "the stabilisation window survives restarts",
			start: 6, n: 14, series: steady(100 * mb), restart: true, want: "300s Brokers ScaleDown 6->3 LinkUnderused"},
		{name: "a higher reading within the window holds until the next one and restarts the wait",
			start: 6, n: 20, series: func(i int) values {
				if i == 5 {
					return brokers(350 * mb) // 5 brokers at 70 %
				}
				return brokers(100 * mb)
			}, want: "300s Brokers ScaleDown 6->5 LinkUnderused; 480s Brokers ScaleDown 5->3 LinkUnderused"},
		{name: "hysteresis: 250 MB/s keeps 4 brokers although 3 would run at 74 %",
			start: 4, n: 20, series: steady(250 * mb), want: ""},
		{name: "no scale-down while partitions are under-replicated",
			start: 6, n: 14, series: func(int) values {
				v := brokers(100 * mb)
				v[UnderReplicatedPartitions] = 3
				return v
			}, want: "300s Brokers Blocked 6->3 UnderReplicatedPartitions"},
		{name: "no scale-down while under-replication is unknown",
			start: 6, n: 14, series: func(int) values {
				v := brokers(100 * mb)
				delete(v, UnderReplicatedPartitions)
				return v
			}, want: "300s Brokers Blocked 6->3 UnderReplicatedPartitionsUnknown"},
		{name: "no scale-down while Strimzi rebalances",
			start: 6, n: 14, series: steady(100 * mb),
			pol: func(p *Policy) {
				p.Safety = BrokerSafety{Reason: "RebalanceRunning", Message: "auto-rebalance RebalanceOnScaleDown"}
			},
			want: "300s Brokers Blocked 6->3 RebalanceRunning"},
		{name: "no scale-down while what Strimzi reports cannot be read",
			start: 6, n: 14, series: steady(100 * mb),
			pol:  func(p *Policy) { p.Safety = SafetyUnknown("listing the cluster's KafkaRebalances failed: forbidden") },
			want: "300s Brokers Blocked 6->3 SafetyUnknown"},
		{name: "no scale-down while Strimzi reports a blocked scale-down",
			start: 6, n: 14, series: steady(100 * mb),
			pol: func(p *Policy) {
				p.Safety = BrokerSafety{Reason: "ScaleDownBlocked", Message: "ScaleDownPreventionCheck"}
			},
			want: "300s Brokers Blocked 6->3 ScaleDownBlocked"},
		{name: "scale-ups are not held back by the safety rules",
			n: 3, series: func(int) values {
				v := brokers(400 * mb)
				v[UnderReplicatedPartitions] = 7
				return v
			}, pol: func(p *Policy) { p.Safety = BrokerSafety{Reason: "RebalanceRunning", Message: "x"} },
			want: "60s Brokers ScaleUp 3->5 LinkSaturated"},
		{name: "missing metrics never scale: a gap starts the window afresh",
			n: 12, series: func(i int) values {
				if i%2 == 1 {
					return values{}
				}
				return brokers(400 * mb)
			}, want: ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pol := testPolicy()
			if tc.pol != nil {
				tc.pol(&pol)
			}
			r := newRun(pol)
			r.restart = tc.restart
			r.cur.Placement = tc.place
			if tc.start > 0 {
				r.cur.Brokers = tc.start
				r.cur.Status = &v1alpha1.AutoscalingStatus{Brokers: tc.start}
			}
			if got := r.series(tc.n, tc.series).changes(); got != tc.want {
				t.Errorf("changes:\n got %q\nwant %q", got, tc.want)
			}
		})
	}
}

func TestRecommendStaleSamplesAreMissing(t *testing.T) {
	pol := testPolicy()
	r := newRun(pol)
	var d Decision
	for i := 0; i < 6; i++ {
		now := t0.Add(time.Duration(i) * pol.Interval)
		obs := Observations{Samples: map[Signal]Sample{
			BrokerTransmitBytes: {400 * mb, now.Add(-2 * time.Minute)},
			BrokerReceiveBytes:  {100 * mb, now.Add(-2 * time.Minute)},
		}}
		d = Recommend(r.cur, obs, pol, now)
		r.cur.Status = &d.Status
		if len(d.Changes) > 0 {
			t.Fatalf("reading %d: stale samples scaled: %+v", i, d.Changes)
		}
	}
	if got := strings.Join(d.Missing, ", "); !strings.Contains(got, "brokerTransmitBytes (stale: 2m0s old)") ||
		!strings.Contains(got, "elasticsearchIndexingRate (no samples)") {
		t.Errorf("missing: %s", got)
	}
}

func TestRecommendExecutors(t *testing.T) {
	pol := testPolicy()
	pol.SparkRunning = true
	// 4 executors at 4000 msgs/s each (spec) are asked for 10000 msgs/s but process only 8000:
	// they are saturated at 2000 each, the lag grows by 2000/s.
	lagging := func(i int) values {
		return values{IngestRate: 10000, ProcessingRate: 8000, ConsumerLag: float64(600000 + 60000*i), ConsumerLagTrend: 2000}
	}
	r := newRun(pol).series(4, lagging)
	if got, want := r.changes(), "60s Executors ScaleUp 4->5 LagGrowing"; got != want {
		t.Errorf("changes %q, want %q", got, want)
	}
	if got := r.last.Status.MessagesPerSecondPerExecutor; got != 3000 {
		t.Errorf("refined messagesPerSecondPerExecutor %d, want 3000 (halfway from 4000 to the measured 2000)", got)
	}

	// Without the job running, its metrics say nothing about executors.
	pol.SparkRunning = false
	if got := newRun(pol).series(6, lagging).changes(); got != "" {
		t.Errorf("the job is not running, but: %s", got)
	}

	// Drained and overprovisioned: down to what the ingest needs, after the window.
	pol.SparkRunning = true
	r = newRun(pol)
	r.cur.Executors = 10
	r.cur.Status = &v1alpha1.AutoscalingStatus{Executors: 10}
	r.series(12, func(int) values {
		return values{IngestRate: 6000, ProcessingRate: 6000, ConsumerLag: 100, ConsumerLagTrend: 0}
	})
	if got, want := r.changes(), "300s Executors ScaleDown 10->4 Overprovisioned"; got != want {
		t.Errorf("changes %q, want %q", got, want)
	}
}

func TestRecommendDataNodes(t *testing.T) {
	r := newRun(testPolicy()).series(4, func(int) values { return values{ElasticsearchIndexingRate: 20000} })
	if got, want := r.changes(), "60s ElasticsearchDataNodes ScaleUp 2->4 IndexingSaturated"; got != want {
		t.Errorf("changes %q, want %q", got, want)
	}
}

// TestRecommendDataNodesReplicas reads the indexing rate of a replicated index: the signal
// counts every shard copy, so that a pipeline keeping up at 1 replica indexes twice its ingest
// and is not catching up.
func TestRecommendDataNodesReplicas(t *testing.T) {
	cases := []struct {
		name   string
		copies int32 // Policy.IndexCopies
		start  int32 // the data nodes running
		series values
		n      int
		want   string
	}{
		// 14000 records/s × 2 copies on 4 nodes of 8000: 87.5 %, above the 80 % target, and 5
		// nodes are needed. Taken for a lag draining, the rate held only 4.
		{"keeping up above the target", 2, 4,
			values{IngestRate: 14000, ElasticsearchIndexingRate: 28000}, 4,
			"60s ElasticsearchDataNodes ScaleUp 4->5 IndexingSaturated"},
		// 10000 records/s × 2 copies on 4 nodes: 62.5 %, within the target and above the down margin.
		{"keeping up within the target", 2, 4,
			values{IngestRate: 10000, ElasticsearchIndexingRate: 20000}, 12, ""},
		// 14000 records/s indexed for 10000 ingested: a lag draining, which may use the headroom.
		{"catching up", 2, 4,
			values{IngestRate: 10000, ElasticsearchIndexingRate: 28000}, 4, ""},
		// Overprovisioned: 5000 records/s × 2 copies need 2 nodes, not 6.
		{"overprovisioned", 2, 6,
			values{IngestRate: 5000, ElasticsearchIndexingRate: 10000}, 12,
			"300s ElasticsearchDataNodes ScaleDown 6->2 IndexingUnderused"},
		// Without replicas the signal is the record rate (and 0 copies, a policy built by hand, is 1).
		{"no replica", 1, 2,
			values{IngestRate: 14000, ElasticsearchIndexingRate: 14000}, 4,
			"60s ElasticsearchDataNodes ScaleUp 2->3 IndexingSaturated"},
		{"copies unset", 0, 2,
			values{IngestRate: 14000, ElasticsearchIndexingRate: 14000}, 4,
			"60s ElasticsearchDataNodes ScaleUp 2->3 IndexingSaturated"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pol := testPolicy()
			pol.IndexCopies = tc.copies
			pol.DataNodes = Bounds{Floor: 1, Max: 6}
			r := newRun(pol)
			r.cur.DataNodes = tc.start
			r.cur.Status = &v1alpha1.AutoscalingStatus{ElasticsearchDataNodes: tc.start}
			r.series(tc.n, func(int) values { return tc.series })
			if got := r.changes(); got != tc.want {
				t.Errorf("changes %q, want %q (%s)", got, tc.want, r.last.Summary)
			}
		})
	}
}

func TestRecommendMemorySplit(t *testing.T) {
	pol := testPolicy()
	pol.SparkRunning = true
	reserve := 16 * float64(1<<30) * 0.20
	starved := func(int) values {
		return values{ExecutorDiskReadBytes: 50 << 20, ExecutorFileRefaults: 5000, ExecutorPageCacheBytes: reserve}
	}
	r := newRun(pol).series(4, starved)
	if got, want := r.changes(), "60s MemorySplit Shift 20->25 PageCacheStarved"; got != want {
		t.Errorf("starved: changes %q, want %q", got, want)
	}
	// Reading from disk with a page cache well below its reserve is not starvation.
	if got := newRun(pol).series(6, func(int) values {
		return values{ExecutorDiskReadBytes: 50 << 20, ExecutorFileRefaults: 5000, ExecutorPageCacheBytes: reserve / 4}
	}).changes(); got != "" {
		t.Errorf("cache not full, but: %s", got)
	}
	// Before cAdvisor 0.60 there are no refaults: disk reads with a full cache stand in.
	if got, want := newRun(pol).series(4, func(int) values {
		return values{ExecutorDiskReadBytes: 50 << 20, ExecutorPageCacheBytes: reserve}
	}).changes(), "60s MemorySplit Shift 20->25 PageCacheStarved"; got != want {
		t.Errorf("no refaults exported: changes %q, want %q", got, want)
	}
	// Where refaults are exported and few, the same reads are not starvation.
	if got := newRun(pol).series(6, func(int) values {
		return values{ExecutorDiskReadBytes: 50 << 20, ExecutorFileRefaults: 10, ExecutorPageCacheBytes: reserve}
	}).changes(); got != "" {
		t.Errorf("few refaults, but: %s", got)
	}
	r = newRun(pol).series(12, func(int) values {
		return values{ExecutorDiskReadBytes: 10 << 20, ExecutorSpillBytes: 100 << 20}
	})
	if got, want := r.changes(), "300s MemorySplit Shift 20->15 SpillDominates"; got != want {
		t.Errorf("spill: changes %q, want %q", got, want)
	}
	if st := r.last.Status; *st.PageCachePercent != 15 || *st.OffHeapPercent != 55 {
		t.Errorf("split %d%%/%d%%, want page cache 15%%, off-heap 55%%", *st.PageCachePercent, *st.OffHeapPercent)
	}
	// Within the budget: with minHeap near the limit no shift toward off-heap fits.
	pol.Memory.MinHeap = ptr.To(resource.MustParse("5800Mi"))
	if got := newRun(pol).series(12, func(int) values {
		return values{ExecutorDiskReadBytes: 10 << 20, ExecutorSpillBytes: 100 << 20}
	}).changes(); got != "" {
		t.Errorf("no room for minHeap, but: %s", got)
	}
}

func TestWindowStaysBounded(t *testing.T) {
	pol := testPolicy()
	pol.Interval = 5 * time.Second
	pol.Stabilization = 3600 * time.Second
	r := newRun(pol).series(2000, func(i int) values { return brokers(float64(i%7) * 50 * mb) })
	for _, w := range r.last.Status.Windows {
		if len(w.Samples) > maxSamples {
			t.Errorf("%s window holds %d samples", w.Resource, len(w.Samples))
		}
	}
}
