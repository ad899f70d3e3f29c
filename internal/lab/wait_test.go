package lab

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/strata-dev/strata/api/v1alpha1"
)

// A wait's record keeps each answer once, when it changed, and bounds what it keeps to the first
// answers and the latest, so that a failure message shows how the value moved.
func TestWaitRecordsEachChange(t *testing.T) {
	w := &Wait{}
	one := func(v float64) Result { return Result{Series: []Sample{{Value: v}}} }
	w.record(0, one(25249))
	w.record(time.Second, one(25249))
	w.record(41*time.Second, one(6539))
	w.record(50*time.Second, Result{})
	w.record(51*time.Second, Result{Err: errors.New("bad_data: parse error")})
	w.record(52*time.Second, Result{Series: []Sample{{Value: 1}, {Value: 2}}})
	w.For = 3 * time.Minute
	want := "waited 3m0s (6 polls): at 0s 25249; at 41s 6539; at 50s no data; at 51s error bad_data: parse error; at 52s 2 series [1 2]"
	if got := w.String(); got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	for i := range 100 {
		w.record(time.Duration(60+i)*time.Second, one(float64(i)))
	}
	if len(w.Seen) != maxSeen {
		t.Fatalf("kept %d answers, want %d", len(w.Seen), maxSeen)
	}
	if w.Seen[0].Answer != "25249" || w.Seen[2].Answer != "no data" || w.Seen[maxSeen-1].Answer != "99" {
		t.Errorf("kept %v, want the first three answers and the latest", w.Seen)
	}
	if w.Polls != 106 {
		t.Errorf("Polls = %d, want 106", w.Polls)
	}
}

// A Result prints its series with their labels, then what its wait saw.
func TestResultString(t *testing.T) {
	r := Result{Series: []Sample{{Labels: map[string]string{"pipeline": "lab", "consumergroup": "lab"}, Value: 3906}}}
	if got, want := r.String(), `{consumergroup="lab", pipeline="lab"} 3906`; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	r.Wait = &Wait{For: 2 * time.Minute, Polls: 3, Seen: []Seen{{At: 0, Answer: "3906"}}}
	if got := r.String(); !strings.HasSuffix(got, " (waited 2m0s (3 polls): at 0s 3906)") {
		t.Errorf("String() = %q, want the wait's record at the end", got)
	}
	if got := (Result{}).String(); got != "no data" {
		t.Errorf("String() of no data = %q", got)
	}
}

// The lag under which the job keeps up is one micro-batch of the workload, and a catch-up is
// given four times what the backlog takes at the catch-up rate beyond the ingest, at least 3
// minutes.
func TestCatchUpBounds(t *testing.T) {
	l := &Lab{Pipeline: &v1alpha1.AnalyticsPipeline{Spec: v1alpha1.AnalyticsPipelineSpec{
		Workload: v1alpha1.WorkloadSpec{MessagesPerSecond: 200, ConsumerMessagesPerSecond: 1000}}}}
	if got := l.CaughtUpLag(); got != 2000 {
		t.Errorf("CaughtUpLag() = %g, want 2000 (10 s of 200 records/s)", got)
	}
	for _, c := range []struct {
		backlog float64
		want    time.Duration
	}{
		{0, 3 * time.Minute},
		{36000, 3 * time.Minute},   // 45 s at 800 records/s beyond the ingest: 3 minutes four times over
		{96000, 8 * time.Minute},   // 120 s, four times
		{240000, 20 * time.Minute}, // a long pause
	} {
		if got := l.CatchUpTimeout(c.backlog); got != c.want {
			t.Errorf("CatchUpTimeout(%g) = %s, want %s", c.backlog, got, c.want)
		}
	}
	// Without a catch-up rate above the ingest, a backlog never drains faster than a record a
	// second: the bound is long, not infinite.
	l.Pipeline.Spec.Workload.ConsumerMessagesPerSecond = 0
	if got := l.CatchUpTimeout(100); got != 400*time.Second {
		t.Errorf("CatchUpTimeout without a catch-up rate = %s, want 6m40s", got)
	}
}
