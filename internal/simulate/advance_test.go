package simulate

import (
	"testing"

	"github.com/strata-dev/strata/api/v1alpha1"
)

// TestKeepBrokers: on the sample traces, the fewest brokers kept in advance with which the
// producers never wait, replayed as strata simulate replays them.
func TestKeepBrokers(t *testing.T) {
	for _, c := range []struct {
		name  string
		trace Trace
		// brokers adjusts the pipeline's spec.kafka.brokers (nil: the sample's 2-8).
		brokers *v1alpha1.Range
		want    *BrokersKept // nil: nothing to keep; the ratios are checked apart
	}{
		// The spike lasts ten minutes; a broker joining takes longer to carry its share:
		// one broker over the trough's two keeps the intake at 18,000 records/s.
		{name: "flash-spike", trace: SampleTraces()["flash-spike"], want: &BrokersKept{Min: 3, Tried: 4}},
		{name: "step-up", trace: SampleTraces()["step-up"], want: &BrokersKept{Min: 3, Tried: 4}},
		// The intake never falls below the demand: no replay.
		{name: "diurnal", trace: SampleTraces()["diurnal"]},
		{name: "noisy-flat", trace: SampleTraces()["noisy-flat"]},
		// Brokers fixed at 2: none can be kept.
		// A spike past what spec.kafka.brokers.max carries: none up to it keeps the intake.
		{name: "spike past max", trace: Trace{Points: []Point{{0, 8000, 0}, {1800, 30000, 0}, {2400, 8000, 0}, {3600, 8000, 0}}},
			brokers: &v1alpha1.Range{Min: 2, Max: 3}, want: &BrokersKept{Tried: 3}},
		{name: "fixed brokers", trace: SampleTraces()["flash-spike"], brokers: &v1alpha1.Range{Min: 2, Max: 2}, want: &BrokersKept{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, tiers := samplePipeline(t)
			if c.brokers != nil {
				p.Spec.Kafka.Brokers = *c.brokers
			}
			tr := c.trace
			r, err := Run(p, tiers, tr, DefaultDelays())
			if err != nil {
				t.Fatal(err)
			}
			got, err := KeepBrokers(p, tiers, tr, DefaultDelays(), r)
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case c.want == nil && got != nil:
				t.Fatalf("intake below demand %.0f s: got %+v, want nothing to keep", r.SecondsIntakeBelowDemand, *got)
			case c.want == nil:
				return
			case got == nil:
				t.Fatalf("intake below demand %.0f s: got nothing to keep, want %+v", r.SecondsIntakeBelowDemand, *c.want)
			case got.Min != c.want.Min || got.Tried != c.want.Tried:
				t.Fatalf("got min %d tried %d, want min %d tried %d", got.Min, got.Tried, c.want.Min, c.want.Tried)
			case got.Min == 0:
				return
			}
			// The replay with that min: the producers never wait, so capacity is below the
			// demand only while the job catches up, less than as declared; the broker kept
			// costs replica-seconds.
			if got.SecondsIntakeBelowDemand != 0 || got.SecondsBelowDemand >= r.SecondsBelowDemand {
				t.Errorf("kept: below demand %.0f s (intake %.0f s), as declared %.0f s", got.SecondsBelowDemand,
					got.SecondsIntakeBelowDemand, r.SecondsBelowDemand)
			}
			if got.StaticPeakRatio <= r.Ratio() || got.StaticPeakRatio > 1 {
				t.Errorf("kept: %.3f of the static peak, as declared %.3f", got.StaticPeakRatio, r.Ratio())
			}
			// The pipeline passed in is left as it was.
			if p.Spec.Kafka.Brokers.Min != 2 {
				t.Errorf("KeepBrokers changed the pipeline's brokers.min to %d", p.Spec.Kafka.Brokers.Min)
			}
		})
	}
}

// TestKeepBrokersIsTheFewest: the bisection finds what replaying every min in turn finds, on a
// spike that needs several brokers kept (8,000 -> 30,000 records/s for ten minutes).
func TestKeepBrokersIsTheFewest(t *testing.T) {
	p, tiers := samplePipeline(t)
	tr := Trace{Points: []Point{{0, 8000, 0}, {1800, 30000, 0}, {2400, 8000, 0}, {5400, 8000, 0}}}
	r, err := Run(p, tiers, tr, DefaultDelays())
	if err != nil {
		t.Fatal(err)
	}
	got, err := KeepBrokers(p, tiers, tr, DefaultDelays(), r)
	if err != nil || got == nil {
		t.Fatalf("KeepBrokers: %+v, %v", got, err)
	}
	var fewest int32
	for k := p.Spec.Kafka.Brokers.Min + 1; k <= got.Tried && fewest == 0; k++ {
		q := p.DeepCopy()
		q.Spec.Kafka.Brokers.Min = k
		res, err := Run(q, tiers, tr, DefaultDelays())
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("brokers.min %d: intake below demand %.0f s", k, res.SecondsIntakeBelowDemand)
		if res.SecondsIntakeBelowDemand == 0 {
			fewest = k
		}
	}
	if fewest < p.Spec.Kafka.Brokers.Min+2 {
		t.Fatalf("the trace needs %d brokers kept: too few to tell a bisection from a scan", fewest)
	}
	if got.Min != fewest {
		t.Errorf("KeepBrokers found %d of up to %d, replaying each finds %d", got.Min, got.Tried, fewest)
	}
}
