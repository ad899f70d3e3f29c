package autoscale

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/strata-dev/strata/api/v1alpha1"
)

// FuzzRecommend drives Recommend with a fuzzed policy and a sequence of fuzzed readings, feeding
// its status back as the operator does, and checks what must hold whatever the signals say:
// every target within the bounds, no broker scale-down while partitions are under-replicated or
// that is unknown, and no scale-down less than the stabilisation window after a scale-up of the
// same resource.
func FuzzRecommend(f *testing.F) {
	f.Add(uint8(3), uint8(6), uint8(4), uint8(10), uint8(30), uint16(300), []byte{200, 10, 0, 90, 50, 0, 255, 0, 1})
	f.Add(uint8(1), uint8(1), uint8(2), uint8(2), uint8(5), uint16(0), []byte{0, 0, 0})
	f.Add(uint8(2), uint8(8), uint8(1), uint8(40), uint8(15), uint16(60), []byte{255, 255, 255, 1, 1, 1, 128, 64, 32, 16, 8, 4, 2})
	f.Fuzz(func(t *testing.T, brokerFloor, brokerMax, execFloor, execMax, intervalSec uint8, stabSec uint16, readings []byte) {
		pol := testPolicy()
		pol.Interval = time.Duration(max(intervalSec, 1)) * time.Second
		pol.Stabilization = time.Duration(stabSec) * time.Second
		pol.Brokers = Bounds{Floor: int32(brokerFloor % 16), Max: int32(brokerMax % 16)}
		pol.Executors = Bounds{Floor: int32(execFloor % 64), Max: int32(execMax % 64)}
		pol.SparkRunning = len(readings)%2 == 0
		if len(readings)%3 == 0 {
			// The default queries' range: rises from a steady intake are read (rise.go).
			pol.Range = 4 * pol.Interval
		}
		r := newRun(pol)
		lastUp := map[string]time.Time{}
		for i := 0; i+2 < len(readings) && i < 3*64; i += 3 {
			v := readings[i : i+3]
			obs := values{
				BrokerTransmitBytes: float64(v[0]) * 4e6, BrokerReceiveBytes: float64(v[1]) * 4e6,
				IngestRate: float64(v[2]) * 200, ProcessingRate: float64(v[1]) * 150,
				ConsumerLag: float64(v[0]) * 1e4, ConsumerLagTrend: float64(int(v[2])-128) * 10,
				ElasticsearchIndexingRate: float64(v[0]) * 100,
			}
			// Under-replication: known zero, known positive, or unknown.
			switch v[2] % 3 {
			case 0:
				obs[UnderReplicatedPartitions] = 0
			case 1:
				obs[UnderReplicatedPartitions] = float64(v[1]%5 + 1)
			}
			now := t0.Add(time.Duration(i/3) * pol.Interval)
			d := r.read(i/3, obs)
			for _, c := range d.Changes {
				check(t, pol, c, obs, now, lastUp)
			}
			checkBounds(t, pol, d.Status)
		}
	})
}

func check(t *testing.T, pol Policy, c v1alpha1.AutoscalingDecision, obs values, now time.Time, lastUp map[string]time.Time) {
	t.Helper()
	switch c.Action {
	case v1alpha1.ActionScaleUp:
		lastUp[c.Resource] = now
	case v1alpha1.ActionScaleDown:
		if c.Resource == v1alpha1.ResourceBrokers {
			if urp, known := obs[UnderReplicatedPartitions]; !known || urp > 0 {
				t.Fatalf("brokers scaled down %d -> %d with under-replicated partitions %v (known %v)", c.From, c.To, urp, known)
			}
		}
		if up, ok := lastUp[c.Resource]; ok && now.Sub(up) < pol.Stabilization {
			t.Fatalf("%s scaled down %s after scaling up, inside the %s window", c.Resource, now.Sub(up), pol.Stabilization)
		}
	}
}

func checkBounds(t *testing.T, pol Policy, st v1alpha1.AutoscalingStatus) {
	t.Helper()
	for _, x := range []struct {
		name   string
		target int32
		b      Bounds
	}{{"brokers", st.Brokers, pol.Brokers}, {"executors", st.Executors, pol.Executors}} {
		hi := max(x.b.Max, x.b.Floor, 1)
		if x.target != 0 && (x.target < 1 || x.target > hi) {
			t.Fatalf("%s target %d outside 1..%d (%+v)", x.name, x.target, hi, x.b)
		}
	}
	if c := st.MessagesPerSecondPerExecutor; c != 0 && (float64(c) < float64(pol.SpecPerExecutor)/refineFactor-1 ||
		float64(c) > float64(pol.SpecPerExecutor)*refineFactor+1 || math.IsNaN(float64(c))) {
		t.Fatal(fmt.Sprintf("refined rate %d outside a factor %d of the spec's %d", c, refineFactor, pol.SpecPerExecutor))
	}
}
