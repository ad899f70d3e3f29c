package plan

import "math"

// PartitionPlacement is how a topic's partitions sit on the brokers, for sizing from measured
// traffic (the autoscaler) what brokerTraffic sizes from the declared workload (the plan): Kafka
// places whole partitions, so the busiest of B brokers holds ⌈P·R/B⌉ of the P·R replicas and
// leads ⌈P/B⌉ of the P partitions (sizing.go).
type PartitionPlacement struct {
	Partitions, ReplicationFactor int32
}

// Busiest returns the busiest of brokers brokers' receive and send rates when the cluster
// receives rx and sends tx bytes per second in all (every replica receives the same share of
// rx, every leader sends the same share of tx). Without partitions it is the even split.
func (pp PartitionPlacement) Busiest(rx, tx float64, brokers int32) (receive, send float64) {
	b := float64(max(brokers, 1))
	if pp.Partitions <= 0 {
		return rx / b, tx / b
	}
	p, r := int64(pp.Partitions), int64(max(pp.ReplicationFactor, 1))
	return rx * float64(ceilDiv(p*r, int64(b))) / float64(p*r), tx * float64(ceilDiv(p, int64(b))) / float64(p)
}

// BrokersFor is the smallest broker count whose busiest broker keeps both link directions at
// or under limit bytes per second, for cluster totals rx and tx. When no count does (a single
// partition's share is over the limit) it is math.MaxInt32: more than any maximum. Without
// partitions it is the even split, ⌈max(rx, tx) ÷ limit⌉.
func (pp PartitionPlacement) BrokersFor(rx, tx, limit float64) int32 {
	if limit <= 0 || math.IsNaN(rx) || math.IsNaN(tx) || (rx <= 0 && tx <= 0) {
		return 1
	}
	fits := func(b int32) bool {
		r, s := pp.Busiest(rx, tx, b)
		return r <= limit*(1+1e-9) && s <= limit*(1+1e-9)
	}
	hi := int64(math.MaxInt32)
	if pp.Partitions > 0 {
		// Beyond P·R brokers every broker holds at most one replica: more do not help.
		hi = int64(pp.Partitions) * int64(max(pp.ReplicationFactor, 1))
	} else if n := math.Ceil(math.Max(rx, tx) / limit); n < float64(hi) {
		hi = int64(max(n, 1))
	}
	if !fits(int32(min(hi, math.MaxInt32))) {
		return math.MaxInt32
	}
	// The busiest broker's rates never grow with the count, so a binary search finds it.
	lo := int64(1)
	for lo < hi {
		mid := lo + (hi-lo)/2
		if fits(int32(mid)) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return int32(lo)
}
