package simulate

import (
	"fmt"
	"math"
	"time"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/internal/autoscale"
	"github.com/strata-dev/strata/internal/autoscale/prometheus"
	"github.com/strata-dev/strata/internal/desired"
	"github.com/strata-dev/strata/internal/plan"
)

// maxDuration bounds a simulation: it keeps a few numbers per simulated second.
const maxDuration = 31 * 24 * time.Hour

// epoch is simulated time zero. Recommend takes the time as an input; any fixed instant does.
var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// Run replays the trace through the pipeline on its tiers and returns what it measured. The
// pipeline's spec.autoscaling settings are used whether or not it is enabled there; its
// declared workload stays the floor the autoscaler never scales below, as in the operator.
func Run(p *v1alpha1.AnalyticsPipeline, tiers []v1alpha1.StorageTier, tr Trace, delays Delays) (*Result, error) {
	return run(p, tiers, tr, delays, nil, false)
}

// runWith is Run with a timeline hook (timeline.go).
func runWith(p *v1alpha1.AnalyticsPipeline, tiers []v1alpha1.StorageTier, tr Trace, delays Delays, timeline func(timelineRow)) (*Result, error) {
	return runHooked(p, tiers, tr, delays, nil, false, timeline)
}

// run is Run with a source of under-replicated partitions (nil: none), which tests use to check
// the autoscaler's safety gate, and the oracle in place of the autoscaler (Oracle).
func run(p *v1alpha1.AnalyticsPipeline, tiers []v1alpha1.StorageTier, tr Trace, delays Delays,
	underReplicated func(seconds float64) float64, oracle bool) (*Result, error) {
	return runHooked(p, tiers, tr, delays, underReplicated, oracle, nil)
}

func runHooked(p *v1alpha1.AnalyticsPipeline, tiers []v1alpha1.StorageTier, tr Trace, delays Delays,
	underReplicated func(seconds float64) float64, oracle bool, timeline func(timelineRow)) (*Result, error) {
	if err := delays.Validate(); err != nil {
		return nil, err
	}
	if d := tr.Duration(); d > maxDuration.Seconds() {
		return nil, fmt.Errorf("the trace lasts %s; simulations are limited to %s", time.Duration(d)*time.Second, maxDuration)
	}
	p = plan.Defaults(p)
	if p.Spec.Autoscaling == nil {
		p.Spec.Autoscaling = &v1alpha1.AutoscalingSpec{}
	}
	p.Spec.Autoscaling.Enabled = true
	if _, err := plan.Fresh(p, tiers); err != nil {
		return nil, err
	}
	s := &sim{p: p, tiers: tiers, trace: tr, delays: delays, model: newModel(p, tiers), res: &Result{},
		underReplicated: underReplicated, settled: -1, oracle: oracle, timeline: timeline}
	if err := s.start(); err != nil {
		return nil, err
	}
	if err := s.run(); err != nil {
		return nil, err
	}
	return s.res, nil
}

// sim is one simulation's state, advanced one second at a time.
type sim struct {
	p      *v1alpha1.AnalyticsPipeline
	tiers  []v1alpha1.StorageTier
	trace  Trace
	delays Delays
	model  *model
	res    *Result

	interval, rangeSec int

	applied v1alpha1.Plan // what the operator applies now
	serving counts        // what carries load now
	st      *v1alpha1.AutoscalingStatus
	pending [3]*change // brokers, executors, data nodes
	// sparkDownUntil: the job is being resubmitted until then.
	sparkDownUntil float64
	// settled is when the last broker change finished moving partitions (-1: none yet).
	settled float64

	// backlog is what the producers could not hand to Kafka yet; lag what Kafka holds that the
	// job has not indexed.
	backlog, lag float64
	flows        *flows
	last         [3]lastAction

	underReplicated func(seconds float64) float64
	// oracle: the counts are the static plan for the load of the moment (oracle.go), not the
	// autoscaler's.
	oracle bool
	// timeline, when set, is told each interval's state (timeline.go).
	timeline func(timelineRow)
}

// change is a change of a resource's replicas on its way: it carries load from at on. A
// broker change moves partitions from begin to at, and load shifts as they move (see capacity).
type change struct {
	to    int32
	at    float64
	from  int32
	begin float64
}

type lastAction struct {
	up   bool
	at   float64
	seen bool
}

func (s *sim) start() error {
	s.interval = int(autoscale.Interval(s.p.Spec.Autoscaling) / time.Second)
	s.rangeSec = int(prometheus.Range(s.p.Spec.Autoscaling) / time.Second) // the $range of the default queries
	first := s.trace.Points[0]
	// The pipeline starts sized for the first load (never under what its spec declares).
	initial, err := planFor(s.p, s.tiers, math.Max(first.MessagesPerSecond, float64(s.p.Spec.Workload.MessagesPerSecond)), first.MessageBytes)
	if err != nil {
		return err
	}
	s.applied = initial
	s.serving = countsOf(initial)
	peak := s.trace.Peak(s.p.Spec.Workload.MessageBytes)
	static, err := planFor(s.p, s.tiers, peak.MessagesPerSecond, peak.MessageBytes)
	if err != nil {
		return err
	}
	d := s.trace.Duration()
	s.res.DurationSeconds = d
	s.res.Resources.Brokers.StaticPeakReplicaSeconds = float64(static.Brokers) * d
	s.res.Resources.Executors.StaticPeakReplicaSeconds = float64(static.Executors) * d
	s.res.Resources.DataNodes.StaticPeakReplicaSeconds = float64(static.ElasticsearchDataNodes) * d
	s.flows = newFlows(int(math.Ceil(d))+1, s.rangeSec)
	return nil
}

// run advances the simulation one second at a time to the end of the trace.
func (s *sim) run() error {
	end := int(math.Ceil(s.trace.Duration()))
	for t := 0; t < end; t++ {
		now := float64(t)
		s.arrive(now)
		pt := s.trace.At(now)
		c, err := s.capacity(now, pt.MessageBytes)
		if err != nil {
			return err
		}
		job := c.job
		if now < s.sparkDownUntil {
			job = 0 // resubmitting: nothing is read
		}
		bytes := float64(s.bytes(pt))
		// Producers hand Kafka what it takes, their backlog first; the job reads what it can.
		in := math.Min(pt.MessagesPerSecond+s.backlog, c.kafka)
		s.backlog += pt.MessagesPerSecond - in
		out := math.Min(s.lag+in, job)
		s.lag += in - out
		s.flows.record(t, pt.MessagesPerSecond, in, out, in*bytes, out*bytes, s.lag)

		capNow := math.Min(c.kafka, job)
		if capNow < pt.MessagesPerSecond {
			s.res.SecondsBelowDemand++
		}
		if c.kafka < pt.MessagesPerSecond {
			s.res.SecondsIntakeBelowDemand++
		}
		waiting := s.lag + s.backlog
		s.res.MaxLagRecords = math.Max(s.res.MaxLagRecords, waiting)
		s.res.MaxLagSeconds = math.Max(s.res.MaxLagSeconds, s.flows.age(t))
		s.res.tally(s.existing(), countsOf(s.applied))
		if t%s.interval == 0 {
			e := s.existing()
			s.res.Series = append(s.res.Series, Step{Time: now, Demand: pt.MessagesPerSecond, Capacity: capNow,
				Replicas: Replicas{Brokers: e.Brokers, Executors: e.Executors, DataNodes: e.DataNodes}})
			s.res.Lag = append(s.res.Lag, waiting)
			if s.timeline != nil {
				s.timeline(s.row(now, pt.MessagesPerSecond, c, job, in))
			}
		}
		if t > 0 && t%s.interval == 0 {
			if err := s.decide(now, c); err != nil {
				return err
			}
		}
	}
	return nil
}

func (s *sim) bytes(pt Point) int64 {
	if pt.MessageBytes > 0 {
		return pt.MessageBytes
	}
	return s.p.Spec.Workload.MessageBytes
}

// arrive completes the changes due by now.
func (s *sim) arrive(now float64) {
	for i, ch := range s.pending {
		if ch == nil || ch.at > now {
			continue
		}
		switch i {
		case 0:
			s.serving.Brokers = ch.to
			s.settled = ch.at
		case 1:
			s.serving.Executors = ch.to
		case 2:
			s.serving.DataNodes = ch.to
		}
		s.pending[i] = nil
	}
}

// existing is the replicas that exist: the new ones from when they are asked for, the leaving
// ones until they are gone.
func (s *sim) existing() counts {
	a := countsOf(s.applied)
	return counts{Brokers: max(a.Brokers, s.serving.Brokers), Executors: max(a.Executors, s.serving.Executors),
		DataNodes: max(a.DataNodes, s.serving.DataNodes)}
}

// decide is one reading of the autoscaler: the signals as Prometheus would return them, the
// operator's Recommend, and the plan it leads to.
func (s *sim) decide(now float64, c capacity) error {
	at := epoch.Add(time.Duration(now) * time.Second)
	base, err := plan.Fresh(autoscale.Base(s.p, s.st), s.tiers)
	if err != nil {
		return err
	}
	safety := autoscale.BrokerSafety{Rebalances: true} // Strimzi's auto-rebalance, as configured
	if s.settled >= 0 {
		safety.Settled = epoch.Add(time.Duration(s.settled) * time.Second)
	}
	if ch := s.pending[0]; ch != nil {
		safety.Reason, safety.Message = "RebalanceRunning", "Cruise Control is moving partitions"
		safety.Joining = max(ch.to-s.serving.Brokers, 0)
		safety.Leaving = max(s.serving.Brokers-ch.to, 0)
		safety.LeavingWhy = safety.Message
	}
	pol := autoscale.NewPolicy(s.p, base, safety, now >= s.sparkDownUntil)
	before := autoscale.Base(s.p, s.st).Spec.Spark.Memory
	var next v1alpha1.Plan
	if s.oracle {
		if next, err = s.foresee(now); err != nil {
			return err
		}
	} else {
		d := autoscale.Recommend(autoscale.NewState(s.p, s.applied, s.st), s.observe(int(now), at), pol, at)
		s.st = &d.Status
		for _, ch := range d.Changes {
			s.res.Decisions = append(s.res.Decisions, Decision{Seconds: now, AutoscalingDecision: ch})
			s.count(now, ch)
		}
		// The operator's own decision of the plan to apply, from the targets just decided (no
		// broker pool is observed: the model's brokers change whole, see brokerChange).
		r, err := plan.Compute(s.p, s.tiers, plan.Observed{Autoscaling: s.st})
		if err != nil {
			return err
		}
		next = r.Plan
	}
	from, to := countsOf(s.applied), countsOf(next)
	s.applied = next
	if to.Brokers != from.Brokers {
		if err := s.reverses(now, to.Brokers); err != nil {
			return err
		}
		_, _, inBytes, _, _ := s.flows.over(int(now), 1)
		s.pending[0] = s.brokerChange(now, to.Brokers, c, inBytes)
	}
	after := autoscale.Base(s.p, s.st).Spec.Spark.Memory
	memoryMoved := after.PageCachePercent != before.PageCachePercent || after.OffHeapPercent != before.OffHeapPercent
	switch {
	case memoryMoved || to.Executors != from.Executors && !desired.ScalesExecutorsInPlace(s.p):
		// Any change of the SparkApplication resubmits the job.
		s.sparkDownUntil = now + s.delays.SparkResubmit.Seconds()
		s.pending[1] = &change{to: to.Executors, at: s.sparkDownUntil}
	case to.Executors > from.Executors:
		// Strata's job changes its executors in place (desired.ExecutorTarget): those running
		// go on reading while the new ones start.
		s.pending[1] = &change{to: to.Executors, at: math.Max(now+s.delays.ExecutorStart.Seconds(), s.sparkDownUntil)}
	case to.Executors < from.Executors:
		// Removed at once: the driver kills them at its next read of the target.
		s.pending[1] = &change{to: to.Executors, at: math.Max(now, s.sparkDownUntil)}
	}
	if to.DataNodes != from.DataNodes {
		wait := s.delays.DataNodeStart
		if to.DataNodes < s.serving.DataNodes {
			wait = s.delays.DataNodeDrain
		}
		s.pending[2] = &change{to: to.DataNodes, at: now + wait.Seconds()}
	}
	return nil
}

// reverses refuses a broker change against the one Cruise Control is making: Strimzi carries a
// started removal (and an addition) to its end whatever the pool asks for meanwhile, so the
// model has no such move to make; the autoscaler's gate (autoscale.BrokerSafety Leaving and
// Reason) is what keeps it from being asked, and an error here says that gate let one through.
func (s *sim) reverses(now float64, to int32) error {
	ch := s.pending[0]
	if ch == nil {
		return nil
	}
	if up := ch.to > ch.from; up && to >= ch.to || !up && to <= ch.to {
		return nil
	}
	return fmt.Errorf("at %s the brokers were set to %d while Cruise Control moved them from %d to %d: "+
		"Strimzi carries that move to its end, so the change could not be made", time.Duration(now)*time.Second, to, ch.from, ch.to)
}

// ReversalWindow is how soon after an action the opposite one counts as a reversal: half an
// hour, whatever the pipeline's stabilisation window (the autoscaler's own, which learns from
// reversals). Counted only inside that window, a scale-down 9 minutes after a scale-up passed
// as no reversal under a 5-minute window, while the load it answered had only paused (issue 28).
const ReversalWindow = autoscale.ReversalWindow

// count tallies a scale action and whether it reverses the resource's previous one, less than
// ReversalWindow before.
func (s *sim) count(now float64, ch v1alpha1.AutoscalingDecision) {
	r := s.res.resource(ch.Resource)
	if r == nil || (ch.Action != v1alpha1.ActionScaleUp && ch.Action != v1alpha1.ActionScaleDown) {
		return
	}
	i := map[string]int{v1alpha1.ResourceBrokers: 0, v1alpha1.ResourceExecutors: 1, v1alpha1.ResourceElasticsearchDataNodes: 2}[ch.Resource]
	up := ch.Action == v1alpha1.ActionScaleUp
	r.ScaleActions++
	if l := s.last[i]; l.seen && l.up != up && now-l.at < ReversalWindow.Seconds() {
		r.Reversals++
	}
	s.last[i] = lastAction{up: up, at: now, seen: true}
}

// observe returns the signals the autoscaler reads, as the default queries would see them:
// rates over $range (four intervals), the lag's slope over the same range.
func (s *sim) observe(t int, at time.Time) autoscale.Observations {
	rng := min(s.rangeSec, t)
	ingest, processed, inBytes, outBytes, lagThen := s.flows.over(t, rng)
	r := float64(s.p.Spec.Kafka.ReplicationFactor)
	sample := func(v float64) autoscale.Sample { return autoscale.Sample{Value: v, Time: at} }
	samples := map[autoscale.Signal]autoscale.Sample{
		// Brokers receive from producers and from the other leaders' replication, and send to
		// the job and to their followers (docs/planning.md, the bandwidth model).
		autoscale.BrokerReceiveBytes:        sample(inBytes * r),
		autoscale.BrokerTransmitBytes:       sample(outBytes + inBytes*(r-1)),
		autoscale.UnderReplicatedPartitions: sample(s.urp(float64(t))),
		autoscale.IngestRate:                sample(ingest),
		autoscale.ProcessingRate:            sample(processed),
		autoscale.ConsumerLag:               sample(s.lag),
		autoscale.ConsumerLagTrend:          sample((s.lag - lagThen) / float64(max(rng, 1))),
		// Every shard copy indexes the record, and the indexing counter counts each.
		autoscale.ElasticsearchIndexingRate: sample(processed * float64(plan.IndexCopies(s.p.Spec.Elasticsearch))),
	}
	return autoscale.Observations{Samples: samples}
}

// urp is the under-replicated partitions at second t: none, as the bandwidth model keeps every
// replica in sync, unless a test says otherwise.
func (s *sim) urp(t float64) float64 {
	if s.underReplicated == nil {
		return 0
	}
	return s.underReplicated(t)
}
