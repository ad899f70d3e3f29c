package simulate

import (
	"math"
	"testing"

	"github.com/strata-dev/strata/api/v1alpha1"
)

// Kafka's intake while partitions move: from what the brokers before carry to what the brokers
// after carry, never beyond either, growing as brokers join and falling as they leave.
func TestShiftedKafka(t *testing.T) {
	for _, c := range []struct {
		name           string
		fromCap, toCap float64
		from, to       int32
		moved, want    float64
	}{
		{"joining, nothing moved", 12500, 31250, 2, 5, 0, 12500},
		{"joining, all moved", 12500, 31250, 2, 5, 1, 31250},
		// An old broker's share is (1 - 0.5·3/5)/2 = 0.35 of the load: 6,250 / 0.35.
		{"joining, half moved", 12500, 31250, 2, 5, 0.5, 6250 / 0.35},
		// Producers' links cap both counts: moves change nothing.
		{"joining, capped elsewhere", 9000, 9000, 2, 5, 0.5, 9000},
		{"leaving, nothing moved", 31250, 12500, 5, 2, 0, 31250},
		{"leaving, all moved", 31250, 12500, 5, 2, 1, 12500},
		// A staying broker's share is (1 + 0.5·3/2)/5 = 0.35.
		{"leaving, half moved", 31250, 12500, 5, 2, 0.5, 6250 / 0.35},
		{"beyond the end", 12500, 31250, 2, 5, 1.5, 31250},
	} {
		if got := shiftedKafka(c.fromCap, c.toCap, c.from, c.to, c.moved); math.Abs(got-c.want) > 1e-6*c.want {
			t.Errorf("%s: %g, want %g", c.name, got, c.want)
		}
	}
}

// On the sample step-up (×2.7, two brokers saturated) the brokers go up once: while they join
// and the ingest rises with every partition moved, the autoscaler asks for no more, and the
// executors and data nodes take at most two steps (issue 28: one broker per reading before).
func TestStepUpBrokersOnceWhileTheyJoin(t *testing.T) {
	p, tiers := samplePipeline(t)
	res, err := Run(p, tiers, SampleTraces()["step-up"], DefaultDelays())
	if err != nil {
		t.Fatal(err)
	}
	for resource, most := range map[string]int{v1alpha1.ResourceBrokers: 1, v1alpha1.ResourceExecutors: 2,
		v1alpha1.ResourceElasticsearchDataNodes: 2} {
		if n := count(res, resource, v1alpha1.ActionScaleUp); n < 1 || n > most {
			t.Errorf("%s: %d scale-ups, want 1 to %d: %+v", resource, n, most, res.Decisions)
		}
	}
}

// A broker change against the move Cruise Control is making is an error of the model, not a
// move: Strimzi carries a started removal or addition to its end. One further the same way,
// or none, is not.
func TestNoBrokerChangeAgainstTheMove(t *testing.T) {
	for _, c := range []struct {
		name        string
		pending     *change
		to          int32
		wantAnError bool
	}{
		{"nothing moving", nil, 2, false},
		{"removal 4 → 3, asked back to 4", &change{from: 4, to: 3}, 4, true},
		{"removal 4 → 3, asked for 5", &change{from: 4, to: 3}, 5, true},
		{"removal 4 → 3, then 2", &change{from: 4, to: 3}, 2, false},
		{"addition 2 → 4, asked for 3", &change{from: 2, to: 4}, 3, true},
		{"addition 2 → 4, asked for 2", &change{from: 2, to: 4}, 2, true},
		{"addition 2 → 4, then 6", &change{from: 2, to: 4}, 6, false},
	} {
		s := &sim{}
		s.pending[0] = c.pending
		if err := s.reverses(600, c.to); (err != nil) != c.wantAnError {
			t.Errorf("%s: error %v, want one: %v", c.name, err, c.wantAnError)
		}
	}
}
