package lab

import (
	"context"
	"testing"
	"time"

	"github.com/strata-dev/strata/internal/autoscale"
	"github.com/strata-dev/strata/internal/desired"
)

// consumerLag pauses the pipeline's ingestion job (SIGSTOP on its driver and executors), as a
// job stalls in a long GC or on a dead disk: its group's committed offsets stop while the
// producer goes on, so the Kafka exporter reports a growing lag and no progress.
// StrataSparkProcessingBelowIngest fires once the 5-minute rates see the job committing less
// than 90 % of ingest, and StrataConsumerLagGrowing once the lag is a minute of the workload's
// records and still growing. Resumed, the job catches up (Spark retries the tasks whose Kafka
// reads timed out during the pause) and the lag falls.
func consumerLag(t *testing.T, ctx context.Context, l *Lab) {
	queries, err := autoscale.Queries(l.Pipeline)
	if err != nil {
		t.Fatal(err)
	}
	prom := l.Prometheus
	group, topic := desired.ConsumerGroup(l.Pipeline), desired.TopicName(l.Pipeline)
	lag := queries[autoscale.ConsumerLag]
	workload := float64(l.Pipeline.Spec.Workload.MessagesPerSecond)
	// The lag of a job that keeps up: under 10 s of the workload (it commits after each
	// micro-batch, which holds what arrived during the previous one: a few seconds of records).
	before, ok := prom.WaitFor(ctx, lag, time.Minute, func(r Result) bool { return len(r.Series) == 1 })
	if !ok {
		t.Fatalf("%s: %v %v, want the group's lag", lag, before.Series, before.Err)
	}
	if got := before.Series[0].Value; got > 10*workload {
		t.Fatalf("the job is %g records behind before the pause, want < %g", got, 10*workload)
	}

	paused := time.Now()
	l.Job.Pause()
	resumed := false
	resume := func() {
		if !resumed {
			l.Job.Resume()
			resumed = true
		}
	}
	defer resume()
	for _, alert := range []string{"StrataSparkProcessingBelowIngest", "StrataConsumerLagGrowing"} {
		r, ok := l.WaitAlert(ctx, alert, "firing", 4*time.Minute)
		if !ok {
			t.Fatalf("%s not firing %s after the job paused: %v %v", alert, time.Since(paused).Round(time.Second), r.Series, r.Err)
		}
		got := r.Series[0].Labels
		if got["namespace"] != PipelineNamespace || got["pipeline"] != l.Pipeline.Name || got["consumergroup"] != group || got["topic"] != topic {
			t.Errorf("%s fires for %v, want namespace %s, pipeline %s, consumergroup %s, topic %s",
				alert, got, PipelineNamespace, l.Pipeline.Name, group, topic)
		}
		t.Logf("%s firing %s after the job paused", alert, time.Since(paused).Round(time.Second))
	}
	atPause, _ := prom.WaitFor(ctx, lag, time.Minute, func(r Result) bool { return len(r.Series) == 1 })
	if len(atPause.Series) != 1 || atPause.Series[0].Value < 60*workload {
		t.Fatalf("%s: %v %v, want a minute of the workload (%g records) behind", lag, atPause.Series, atPause.Err, 60*workload)
	}

	resume()
	back := time.Now()
	r, ok := prom.WaitFor(ctx, lag, 3*time.Minute, func(r Result) bool { return len(r.Series) == 1 && r.Series[0].Value < 10*workload })
	if !ok {
		t.Fatalf("%s: %v %v three minutes after the job resumed at %g records behind, want < %g",
			lag, r.Series, r.Err, atPause.Series[0].Value, 10*workload)
	}
	t.Logf("the job caught up %g records %s after it resumed", atPause.Series[0].Value, time.Since(back).Round(time.Second))
}
