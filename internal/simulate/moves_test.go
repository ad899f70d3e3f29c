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
