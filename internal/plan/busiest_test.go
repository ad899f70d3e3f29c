package plan

import (
	"math"
	"math/big"
	"testing"
)

func TestBrokersFor(t *testing.T) {
	const mb = 1e6
	for _, tc := range []struct {
		name          string
		pp            PartitionPlacement
		rx, tx, limit float64
		want          int32
	}{
		// The lab's finding: 10 partitions on 3 brokers put 4 leaders on one.
		{"10 partitions, mean fits 3, busiest needs 4", PartitionPlacement{10, 2}, 20 * mb, 30 * mb, 10.5 * mb, 4},
		{"12 partitions divide by 3: the mean", PartitionPlacement{12, 2}, 20 * mb, 30 * mb, 10 * mb, 3},
		{"without partitions: the even split", PartitionPlacement{}, 20 * mb, 30 * mb, 10 * mb, 3},
		{"receive decides", PartitionPlacement{12, 3}, 60 * mb, 10 * mb, 10 * mb, 6},
		{"one partition alone is over the limit", PartitionPlacement{2, 1}, 40 * mb, 40 * mb, 10 * mb, math.MaxInt32},
		{"no traffic", PartitionPlacement{12, 3}, 0, 0, 10 * mb, 1},
		{"no limit", PartitionPlacement{12, 3}, 10 * mb, 10 * mb, 0, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.pp.BrokersFor(tc.rx, tc.tx, tc.limit); got != tc.want {
				t.Errorf("BrokersFor = %d, want %d", got, tc.want)
			}
		})
	}
}

// Busiest from measured totals is the plan's busiest broker: with rx = I·R and tx = C + I·(R−1),
// the rates the plan sizes from the declared workload (brokerTraffic).
func TestBusiestMatchesThePlan(t *testing.T) {
	for p := int32(1); p <= 24; p++ {
		for r := int32(1); r <= 3; r++ {
			w := workload{ingest: big.NewRat(7_000_000, 1), consume: big.NewRat(5_000_000, 1)}
			traffic := newBrokerTraffic(w, r, p)
			rx := 7e6 * float64(r)
			tx := 5e6 + 7e6*float64(r-1)
			for b := int32(1); b <= 2*p*r; b++ {
				gotR, gotS := PartitionPlacement{p, r}.Busiest(rx, tx, b)
				wantR, _ := traffic.receive(int64(b)).Float64()
				wantS, _ := traffic.send(int64(b)).Float64()
				if math.Abs(gotR-wantR) > 1e-3 || math.Abs(gotS-wantS) > 1e-3 {
					t.Fatalf("P=%d R=%d B=%d: busiest %v/%v, the plan's %v/%v", p, r, b, gotR, gotS, wantR, wantS)
				}
			}
			// BrokersFor at the plan's own per-broker limit finds the plan's count.
			limit, _ := traffic.busiest(3).Float64()
			want := traffic.brokersNeeded(traffic.busiest, traffic.busiest(3))
			if got := (PartitionPlacement{p, r}).BrokersFor(rx, tx, limit); int64(got) != want.Int64() {
				t.Errorf("P=%d R=%d: BrokersFor = %d, the plan's brokersNeeded %d", p, r, got, want.Int64())
			}
		}
	}
}
