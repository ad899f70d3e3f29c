package simulate

import "github.com/strata-dev/strata/api/v1alpha1"

// Result is what a simulation measured. Its JSON names are a contract: scripts read them.
type Result struct {
	DurationSeconds float64 `json:"durationSeconds"`
	// Resources are the three scalable resources.
	Resources Resources `json:"resources"`
	// SecondsBelowDemand is how long the pipeline's capacity (its slowest stage, at the
	// replicas serving) was under the demand, a job resubmission included.
	SecondsBelowDemand float64 `json:"secondsBelowDemand"`
	// SecondsIntakeBelowDemand is how much of that Kafka's intake (the producers' and brokers'
	// links, the brokers' disks) was itself under the demand: records waited at the producers.
	// The rest of the time below demand, Kafka took every record and the job fell behind: its
	// lag, which MaxLagSeconds bounds, held what it could not carry.
	SecondsIntakeBelowDemand float64 `json:"secondsIntakeBelowDemand"`
	// MaxLagRecords is the most records that had arrived but were not yet indexed beyond what
	// one second brings: the consumers' lag plus what the producers could not hand to Kafka.
	MaxLagRecords float64 `json:"maxLagRecords"`
	// MaxLagSeconds is the longest a record waited to be indexed, beyond the first second.
	MaxLagSeconds float64 `json:"maxLagSeconds"`
	// BrokersKept is what brokers kept in advance would have done where Kafka's intake was
	// below the demand (KeepBrokers; strata simulate sets it, Run does not).
	BrokersKept *BrokersKept `json:"brokersKept,omitempty"`
	// Series has one step per autoscaler interval.
	Series []Step `json:"series"`

	// Lag is each step's lag in records, and Decisions every decision the autoscaler made,
	// for the table and the plot.
	Lag       []float64  `json:"-"`
	Decisions []Decision `json:"-"`
}

// Resources holds one ResourceResult per scalable resource.
type Resources struct {
	Brokers   ResourceResult `json:"brokers"`
	Executors ResourceResult `json:"executors"`
	DataNodes ResourceResult `json:"dataNodes"`
}

// ResourceResult is what one resource cost and how it moved.
type ResourceResult struct {
	// ReplicaSeconds sums the replicas that existed each second: new ones from when they were
	// asked for, leaving ones until they were gone.
	ReplicaSeconds float64 `json:"replicaSeconds"`
	// StaticPeakReplicaSeconds is what the plan for the trace's peak costs, held throughout.
	StaticPeakReplicaSeconds float64 `json:"staticPeakReplicaSeconds"`
	// ScaleActions counts scale-ups and scale-downs (held-back ones are not actions).
	ScaleActions int `json:"scaleActions"`
	// Reversals counts actions opposite to the resource's previous one, less than
	// ReversalWindow after it.
	Reversals int `json:"reversals"`
	// Min and Max are the fewest and most replicas the autoscaler asked for.
	Min int32 `json:"min"`
	Max int32 `json:"max"`
}

// Step is the pipeline at one moment.
type Step struct {
	Time     float64  `json:"time"`
	Demand   float64  `json:"demand"`
	Capacity float64  `json:"capacity"`
	Replicas Replicas `json:"replicas"`
}

// Replicas are the replicas that exist (asked for or still leaving) at a step.
type Replicas struct {
	Brokers   int32 `json:"brokers"`
	Executors int32 `json:"executors"`
	DataNodes int32 `json:"dataNodes"`
}

// Decision is one change the autoscaler decided, at a simulated second.
type Decision struct {
	Seconds float64
	v1alpha1.AutoscalingDecision
}

// resource returns the result of an autoscaler resource name; nil for the memory split.
func (r *Result) resource(name string) *ResourceResult {
	switch name {
	case v1alpha1.ResourceBrokers:
		return &r.Resources.Brokers
	case v1alpha1.ResourceExecutors:
		return &r.Resources.Executors
	case v1alpha1.ResourceElasticsearchDataNodes:
		return &r.Resources.DataNodes
	}
	return nil
}

// tally adds one second of replicas and the counts asked for.
func (r *Result) tally(existing, asked counts) {
	for _, x := range []struct {
		res         *ResourceResult
		have, asked int32
	}{{&r.Resources.Brokers, existing.Brokers, asked.Brokers},
		{&r.Resources.Executors, existing.Executors, asked.Executors},
		{&r.Resources.DataNodes, existing.DataNodes, asked.DataNodes}} {
		x.res.ReplicaSeconds += float64(x.have)
		if x.res.Min == 0 || x.asked < x.res.Min {
			x.res.Min = x.asked
		}
		x.res.Max = max(x.res.Max, x.asked)
	}
}

// Ratio is replica-seconds over the static peak's, summed over the resources.
func (r *Result) Ratio() float64 {
	var got, static float64
	for _, x := range []ResourceResult{r.Resources.Brokers, r.Resources.Executors, r.Resources.DataNodes} {
		got += x.ReplicaSeconds
		static += x.StaticPeakReplicaSeconds
	}
	if static == 0 {
		return 0
	}
	return got / static
}
