package lab

import (
	"context"
	"time"

	"github.com/strata-dev/strata/internal/autoscale"
	autoscaleprom "github.com/strata-dev/strata/internal/autoscale/prometheus"
	"github.com/strata-dev/strata/internal/desired"
)

// CaughtUpLag is the consumer lag, in records, under which the job keeps up with the producer:
// one micro-batch of the workload (desired.MicroBatchSeconds of spec.workload.messagesPerSecond).
// The job commits its group's offsets after each micro-batch, which holds what arrived during
// the one before: right after a commit it is less than this behind as long as its batches take
// less than MicroBatchSeconds. A job that cannot carry the workload on this machine never gets
// under it, however long the wait; one that can gets there within a few batches.
func (l *Lab) CaughtUpLag() float64 {
	return float64(l.Pipeline.Spec.Workload.MessagesPerSecond * desired.MicroBatchSeconds)
}

// WaitCaughtUp waits until the pipeline's consumer lag, as the autoscaler and the alerts read
// it from the Kafka exporter, is under CaughtUpLag, or timeout passes. The Result says what the
// lag was meanwhile.
func (l *Lab) WaitCaughtUp(ctx context.Context, timeout time.Duration) (Result, bool) {
	queries, err := autoscaleprom.Queries(l.Pipeline)
	if err != nil {
		return Result{Err: err}, false
	}
	limit := l.CaughtUpLag()
	return l.Prometheus.WaitFor(ctx, queries[autoscale.ConsumerLag], timeout, func(r Result) bool {
		return r.Err == nil && len(r.Series) == 1 && r.Series[0].Value < limit
	})
}

// CatchUpTimeout bounds the wait for the job to drain a backlog of records: the time the
// plan's catch-up rate (spec.workload.consumerMessagesPerSecond, less the ingest that keeps
// arriving) takes for it, four times over for a machine busier than the one the rate was
// measured on, and never less than three minutes (a restart after a failed query waits the
// restart policy's interval, then Spark starts its JVMs again).
func (l *Lab) CatchUpTimeout(backlog float64) time.Duration {
	w := l.Pipeline.Spec.Workload
	drain := float64(max(w.ConsumerMessagesPerSecond-w.MessagesPerSecond, 1))
	return max(3*time.Minute, time.Duration(4*backlog/drain*float64(time.Second)))
}

// JobStartTimeout bounds the wait for the job's first commit, which is when its consumer lag
// first exists: its JVMs start, and its first micro-batch reads and writes what the producer sent
// meanwhile. On an idle 2-core machine that takes about two minutes; at a load average of 23 (four
// other test suites beside the lab) it took over five, and a five-minute deadline failed a job
// that was working. A ceiling for a job that never commits, not an expectation.
const JobStartTimeout = 15 * time.Minute

// WaitJobStarted waits until the job has committed its group's offsets once (the lag query
// returns a series), or timeout passes, and returns the lag then: the backlog the job starts
// from, for CatchUpTimeout.
func (l *Lab) WaitJobStarted(ctx context.Context, timeout time.Duration) (Result, bool) {
	queries, err := autoscaleprom.Queries(l.Pipeline)
	if err != nil {
		return Result{Err: err}, false
	}
	return l.Prometheus.WaitFor(ctx, queries[autoscale.ConsumerLag], timeout, func(r Result) bool {
		return r.Err == nil && len(r.Series) == 1
	})
}
