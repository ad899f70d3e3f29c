package lab

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/common/model"

	"github.com/strata-dev/strata/internal/alerts"
	"github.com/strata-dev/strata/internal/autoscale"
	autoscaleprom "github.com/strata-dev/strata/internal/autoscale/prometheus"
	"github.com/strata-dev/strata/internal/desired"
)

// consumerLag pauses the pipeline's ingestion job (SIGSTOP on its driver and executors), as a
// job stalls in a long GC or on a dead disk: its group's committed offsets stop while the
// producer goes on, so the Kafka exporter reports a growing lag and no progress.
// StrataSparkProcessingBelowIngest fires once the 5-minute rates see the job committing less
// than 90 % of ingest, and StrataConsumerLagGrowing once the lag is a minute of the workload's
// records and still growing. Resumed, the job catches up (Spark retries the tasks whose Kafka
// reads timed out during the pause) and the lag falls under a micro-batch of the workload
// within the time its catch-up rate takes (Lab.CatchUpTimeout).
func consumerLag(t *testing.T, ctx context.Context, l *Lab) {
	queries, err := autoscaleprom.Queries(l.Pipeline)
	if err != nil {
		t.Fatal(err)
	}
	prom := l.Prometheus
	group, topic := desired.ConsumerGroup(l.Pipeline), desired.TopicName(l.Pipeline)
	lag := queries[autoscale.ConsumerLag]
	workload := float64(l.Pipeline.Spec.Workload.MessagesPerSecond)
	// The job keeps up before the pause (TestLab waited for that before its first check; a
	// scenario before this one may have set it back).
	if r, ok := l.WaitCaughtUp(ctx, l.CatchUpTimeout(0)); !ok {
		t.Fatalf("the job is not caught up before the pause (its lag under %g records, a micro-batch of the workload): %v", l.CaughtUpLag(), r)
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
	// The rules' rates are over alerts.Window and still hold what the job committed before the
	// pause: when it had just drained a backlog (a slow start's, at several times ingest), its
	// committed rate stays above 90 % of ingest until that catch-up leaves the window, up to a
	// whole window after the pause (the lab at a load average of 37 fired 4.5 minutes after).
	// A ceiling, not an expectation.
	window, err := model.ParseDuration(alerts.Window)
	if err != nil {
		t.Fatal(err)
	}
	for _, alert := range []string{"StrataSparkProcessingBelowIngest", "StrataConsumerLagGrowing"} {
		r, ok := l.WaitAlert(ctx, alert, "firing", time.Duration(window)+4*time.Minute)
		if !ok {
			t.Fatalf("%s not firing %s after the job paused: %v", alert, time.Since(paused).Round(time.Second), r)
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
		t.Fatalf("%s %s after the job paused: %v, want a minute of the workload (%g records) behind",
			lag, time.Since(paused).Round(time.Second), atPause, 60*workload)
	}

	resume()
	back := time.Now()
	backlog := atPause.Series[0].Value
	// A task whose Kafka fetch the pause cut short fails only after the source's poll timeout
	// (spark-sql-kafka-0-10's KafkaMicroBatchStream: kafkaConsumer.pollTimeoutMs, by default
	// spark.network.timeout, 120 s), and Spark then runs it again: the CI run at a load average
	// of 7 committed nothing for 2 minutes after the resume, drained, and stalled once more.
	ceiling := l.CatchUpTimeout(backlog) + 2*kafkaPollTimeout
	r, ok := l.WaitCaughtUp(ctx, ceiling)
	if !ok {
		t.Fatalf("the job did not catch up %g records within %s of resuming (running: %t, restarted %d times), want its lag under %g: %v",
			backlog, ceiling, l.Job.Running(), l.Job.Restarts(), l.CaughtUpLag(), r)
	}
	took := time.Since(back)
	t.Logf("the job caught up %g records %s after it resumed: %.0f records/s beside the %g arriving",
		backlog, took.Round(time.Second), backlog/took.Seconds()+workload, workload)
}

// kafkaPollTimeout is the Kafka source's poll timeout in the lab's job, which sets neither
// kafkaConsumer.pollTimeoutMs nor spark.network.timeout: Spark's default network timeout.
const kafkaPollTimeout = 120 * time.Second
