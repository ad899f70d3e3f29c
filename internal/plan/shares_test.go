package plan

import (
	"math/big"
	"testing"
)

// The busiest broker's share of the cluster's traffic, against Kafka's whole-partition
// placement (docs/lab.md, "The bandwidth model against shaped links").
func TestBusiestBrokerShares(t *testing.T) {
	// Ingest 1,000 B/s, consumers read it once: the cluster receives 1,000·R and sends 1,000·R.
	w := workload{ingest: ratInt(1000), consume: ratInt(1000)}
	cases := []struct {
		name               string
		p, r, b            int32
		replicas, leaders  int64
		receive, send      *big.Rat // the busiest broker's, in B/s
		meanRecv, meanSend *big.Rat // the cluster's traffic ÷ B
	}{
		// P and P·R divide by B: the busiest broker is the mean one, the old figures.
		{"12 partitions on 3 brokers", 12, 2, 3, 8, 4, big.NewRat(2000, 3), big.NewRat(2000, 3), big.NewRat(2000, 3), big.NewRat(2000, 3)},
		{"12 partitions on 2 brokers", 12, 2, 2, 12, 6, ratInt(1000), ratInt(1000), ratInt(1000), ratInt(1000)},
		{"20 partitions on 4 brokers, R 3", 20, 3, 4, 15, 5, ratInt(750), ratInt(750), ratInt(750), ratInt(750)},
		// The lab's finding: 10 partitions on 3 brokers, one leads 4 (a fifth over the mean
		// 10/3) and one holds ⌈20/3⌉ = 7 replicas (a twentieth over 20/3).
		{"10 partitions on 3 brokers", 10, 2, 3, 7, 4, ratInt(700), ratInt(800), big.NewRat(2000, 3), big.NewRat(2000, 3)},
		// P·R divides by B but P does not: receives are even, sends are not.
		{"3 partitions on 2 brokers", 3, 2, 2, 3, 2, ratInt(1000), big.NewRat(4000, 3), ratInt(1000), ratInt(1000)},
		// More brokers than replicas: the busiest still holds a whole one.
		{"1 partition on 3 brokers, R 1", 1, 1, 3, 1, 1, ratInt(1000), ratInt(1000), big.NewRat(1000, 3), big.NewRat(1000, 3)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tr := newBrokerTraffic(w, c.r, c.p)
			b := int64(c.b)
			if got := tr.replicas(b); got != c.replicas {
				t.Errorf("replicas = %d, want %d", got, c.replicas)
			}
			if got := tr.leaders(b); got != c.leaders {
				t.Errorf("leaders = %d, want %d", got, c.leaders)
			}
			if got := tr.receive(b); got.Cmp(c.receive) != 0 {
				t.Errorf("receive = %s, want %s", got.RatString(), c.receive.RatString())
			}
			if got := tr.send(b); got.Cmp(c.send) != 0 {
				t.Errorf("send = %s, want %s", got.RatString(), c.send.RatString())
			}
			if tr.receive(b).Cmp(c.meanRecv) < 0 || tr.send(b).Cmp(c.meanSend) < 0 {
				t.Errorf("busiest %s / %s below the mean %s / %s", tr.receive(b).RatString(), tr.send(b).RatString(),
					c.meanRecv.RatString(), c.meanSend.RatString())
			}
		})
	}
}

// brokersNeeded is the smallest count that fits, or nil when one partition alone is too much.
func TestBrokersNeeded(t *testing.T) {
	w := workload{ingest: ratInt(1000), consume: ratInt(1000)}
	tr := newBrokerTraffic(w, 2, 10) // 100 B/s per replica, 200 B/s per leader
	cases := []struct {
		limit int64
		want  int64 // 0: none
	}{
		{2000, 1}, // 10 leaders send 2,000
		{1000, 2}, // 5 leaders
		{800, 3},  // 4 leaders, 7 replicas: the lab's case
		{600, 4},  // 3 leaders
		{400, 5},  // 2 leaders
		{399, 10}, // 1 leader each
		{200, 10}, // exactly one partition's leader
		{199, 0},  // a single leader is over: no count helps
		{100, 0},  //
	}
	for _, c := range cases {
		got := tr.brokersNeeded(tr.busiest, ratInt(c.limit))
		switch {
		case c.want == 0 && got != nil:
			t.Errorf("limit %d: %s brokers, want none", c.limit, got)
		case c.want != 0 && (got == nil || got.Int64() != c.want):
			t.Errorf("limit %d: %v brokers, want %d", c.limit, got, c.want)
		}
	}
}
