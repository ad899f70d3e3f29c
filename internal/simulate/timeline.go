package simulate

import (
	"fmt"
	"io"
	"math"

	"github.com/strata-dev/strata/api/v1alpha1"
)

// A timeline prints one run interval by interval: the demand, what Kafka and the job carry, the
// replicas serving and asked for, the broker move on its way and the decisions. It shows where
// the time between a change of the load and capacity meeting it goes: the reading (rates over
// $range), the decision (windows, cool-downs), and the actuation (brokers starting, Cruise
// Control's moves at the throttle, the job's resubmission, data nodes starting).

// timelineRow is the state at one interval.
type timelineRow struct {
	seconds, demand, kafka, job, intake, lag, backlog float64
	serving, applied                                  counts
	// moveBegin and moveEnd bound the broker move on its way (-1: none).
	moveBegin, moveEnd float64
}

func (s *sim) row(now, demand float64, c capacity, job, intake float64) timelineRow {
	r := timelineRow{seconds: now, demand: demand, kafka: c.kafka, job: job, intake: intake, lag: s.lag,
		backlog: s.backlog, serving: s.serving, applied: countsOf(s.applied), moveBegin: -1, moveEnd: -1}
	if ch := s.pending[0]; ch != nil {
		r.moveBegin, r.moveEnd = ch.begin, ch.at
	}
	return r
}

// Timeline replays the trace as Run does and writes its timeline between from and to (seconds),
// with every decision at the interval it was made in.
func Timeline(w io.Writer, p *v1alpha1.AnalyticsPipeline, tiers []v1alpha1.StorageTier, tr Trace, delays Delays, from, to float64) (*Result, error) {
	var rows []timelineRow
	res, err := runWith(p, tiers, tr, delays, func(r timelineRow) {
		if r.seconds >= from && r.seconds <= to {
			rows = append(rows, r)
		}
	})
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(w, "%8s %7s %7s %7s %7s %9s %9s  %-8s %-8s %s\n", "t", "demand", "kafka", "job", "intake", "lag", "backlog",
		"serving", "asked", "broker move")
	d := 0
	for _, r := range rows {
		move := ""
		if r.moveBegin >= 0 {
			move = fmt.Sprintf("%s .. %s", clock(r.moveBegin), clock(r.moveEnd))
		}
		mark := " "
		if math.Min(r.kafka, r.job) < r.demand {
			mark = "<" // capacity below demand
		}
		fmt.Fprintf(w, "%8s%s%7.0f %7.0f %7.0f %7.0f %9.0f %9.0f  %-8s %-8s %s\n", clock(r.seconds), mark, r.demand,
			math.Min(r.kafka, 1e6), math.Min(r.job, 1e6), r.intake, r.lag, r.backlog, r.serving, r.applied, move)
		for ; d < len(res.Decisions) && res.Decisions[d].Seconds <= r.seconds; d++ {
			if x := res.Decisions[d]; x.Seconds == r.seconds {
				fmt.Fprintf(w, "%10s %s %s %d -> %d (%s)\n", "", x.Resource, x.Action, x.From, x.To, x.Reason)
			}
		}
	}
	return res, nil
}

func (c counts) String() string { return fmt.Sprintf("%d/%d/%d", c.Brokers, c.Executors, c.DataNodes) }

// clock formats seconds as h:mm:ss.
func clock(s float64) string {
	n := int(s)
	return fmt.Sprintf("%d:%02d:%02d", n/3600, n/60%60, n%60)
}
