package autoscale

import (
	"strconv"
	"strings"
	"testing"

	"github.com/strata-dev/strata/api/v1alpha1"
)

// The autoscaler's tuning from `strata simulate` (docs/simulate.md): each case below made the
// simulated pipeline overshoot or climb a staircase before the change it tests.

func TestExecutorRateNotRefinedWhileIndexingSaturated(t *testing.T) {
	pol := testPolicy()
	pol.SparkRunning = true
	r := newRun(pol)
	r.cur.Executors = 6
	r.cur.Status = &v1alpha1.AutoscalingStatus{Executors: 6}
	// Two data nodes index all they can (2 x 8000): the job processes 16000 with 6 executors
	// (2667 each) while the lag grows. The executors are not what is slow.
	r.series(4, func(i int) values {
		return values{IngestRate: 20000, ProcessingRate: 16000, ConsumerLag: float64(700000 + 120000*i),
			ConsumerLagTrend: 4000, ElasticsearchIndexingRate: 16000}
	})
	if got := r.last.Status.MessagesPerSecondPerExecutor; got != 0 {
		t.Errorf("messagesPerSecondPerExecutor refined to %d; Elasticsearch is the limit, the spec's 4000 should hold", got)
	}
	if got := r.changes(); !strings.Contains(got, "ElasticsearchDataNodes ScaleUp 2->4") {
		t.Errorf("changes %q, want the data nodes to go 2->4 in one step (ingest 20000 plus the lag's drain)", got)
	}
}

func TestLagDrainsWithinTheHeadroom(t *testing.T) {
	pol := testPolicy()
	pol.SparkRunning = true
	r := newRun(pol)
	r.cur.Executors = 5
	r.cur.Status = &v1alpha1.AutoscalingStatus{Executors: 5}
	// Back from a resubmission with 900,000 records of lag: 5 executors carry the 16000 ingest
	// at the 80 % target and drain the lag in the window with their headroom (16000 + 3000 <=
	// 20000). Counting the drain against the target would ask for a sixth and resubmit again.
	r.series(8, func(i int) values {
		return values{IngestRate: 16000, ProcessingRate: 19000, ConsumerLag: float64(900000 - 90000*i), ConsumerLagTrend: -3000}
	})
	if got := r.changes(); got != "" {
		t.Errorf("changes %q, want none", got)
	}
}

func TestDataNodesCatchingUpUseTheHeadroom(t *testing.T) {
	r := newRun(testPolicy())
	r.cur.DataNodes = 3
	r.cur.Status = &v1alpha1.AutoscalingStatus{ElasticsearchDataNodes: 3}
	// 3 data nodes carry the 16000 ingest at 67 %; indexing 20000 while a lag drains needs no
	// fourth.
	r.series(12, func(int) values {
		return values{ElasticsearchIndexingRate: 20000, IngestRate: 16000, ConsumerLag: 0}
	})
	if got := r.changes(); got != "" {
		t.Errorf("changes %q, want none", got)
	}
}

func TestSparkCooldownCoversTheRateRange(t *testing.T) {
	pol := testPolicy()
	pol.SparkRunning = true
	pol.Executors.Max = 40
	r := newRun(pol).series(30, func(i int) values {
		return values{IngestRate: 40000, ProcessingRate: 8000, ConsumerLag: float64(600000 + 60000*i), ConsumerLagTrend: 2000}
	})
	var times []int
	for _, c := range r.log {
		if strings.Contains(c, "Executors ScaleUp") {
			s, _ := strconv.Atoi(strings.TrimSuffix(strings.Fields(c)[0], "s"))
			times = append(times, s)
		}
	}
	// The lag keeps growing with the processing fixed, so the executors keep scaling up; but
	// never sooner than the cool-down 120 s plus four 30 s intervals after the step before.
	if len(times) < 2 || times[0] != 60 {
		t.Fatalf("executor scale-ups at %v, want the first at 60s and more after it", times)
	}
	for i := 1; i < len(times); i++ {
		if times[i]-times[i-1] < 240 {
			t.Errorf("executor scale-ups at %v: %ds apart, want at least 240s", times, times[i]-times[i-1])
		}
	}
}
