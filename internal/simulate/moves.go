package simulate

import (
	"math"

	"github.com/strata-dev/strata/internal/desired"
)

// Broker moves: how long brokers joining or leaving take to carry (or hand over) their load,
// and what Kafka takes while their partitions move.

// brokerChange is when brokers going from what serves now to `to` carry load: new brokers after
// they start and Cruise Control has moved their share of the data onto them; leaving ones once
// their data is moved off. What moves, and how fast under the rebalance template's throttle, is
// desired.RebalanceMove's, which `strata plan` reports as the time a broker takes to join;
// delays.rebalanceBytesPerSecond, when set, is the rate of the whole move instead.
func (s *sim) brokerChange(now float64, to int32, c capacity, ingestBytes float64) *change {
	from := s.serving.Brokers
	if to == from {
		return nil
	}
	perBroker := c.brokerData * s.delays.BrokerDataFraction
	moved, rate := desired.RebalanceMove(s.applied, from, to, perBroker, ingestBytes)
	start := 0.0
	if to > from {
		start = s.delays.BrokerStart.Seconds()
	}
	if s.delays.RebalanceBytesPerSecond > 0 {
		rate = float64(s.delays.RebalanceBytesPerSecond)
	}
	took := 0.0
	if rate > 0 {
		took = moved / rate
	}
	return &change{to: to, at: now + start + took, from: from, begin: now + start}
}

// capacity is what the serving replicas carry. While Cruise Control moves partitions, the load
// shifts one partition at a time: Kafka's controller, once a reassigned partition's new replicas
// are in sync, drops the old ones and, when the leader was among them, elects the first replica
// of the new assignment (Cruise Control lists the broker it means to lead first), so each moved
// partition's produce and fetch traffic leaves the old broker as its move completes. Cruise
// Control runs the moves in batches of a few partitions per broker
// (num.concurrent.partition.movements.per.broker), so over a move of many partitions the shift
// is close to linear in time. Joining brokers take load in that measure; leaving ones hand it
// over in that measure, and the busiest broker, which bounds Kafka's intake, is an old one
// when brokers join and a staying one when they leave.
func (s *sim) capacity(now float64, bytes int64) (capacity, error) {
	c, err := s.model.capacity(s.serving, bytes)
	ch := s.pending[0]
	if err != nil || ch == nil || now <= ch.begin || ch.at <= ch.begin || ch.from != s.serving.Brokers {
		return c, err
	}
	next, err := s.model.capacity(counts{Brokers: ch.to, Executors: s.serving.Executors, DataNodes: s.serving.DataNodes}, bytes)
	if err != nil {
		return c, err
	}
	c.kafka = shiftedKafka(c.kafka, next.kafka, ch.from, ch.to, (now-ch.begin)/(ch.at-ch.begin))
	return c, nil
}

// shiftedKafka is Kafka's intake a fraction moved of the way from `from` brokers (which take
// fromCap) to `to` (toCap): each of the busiest brokers carries a share of the load that falls
// (joining) or rises (leaving) linearly with the fraction moved, and the intake is what keeps
// it at the limit fromCap gives each of them.
func shiftedKafka(fromCap, toCap float64, from, to int32, moved float64) float64 {
	moved = math.Min(math.Max(moved, 0), 1)
	k := math.Abs(float64(to - from))
	if to > from {
		// An old broker's share, 1/from at first, is (1 - moved·k/to)/from.
		return math.Min(toCap, fromCap/(1-moved*k/float64(to)))
	}
	// A staying broker's share, 1/from at first, is (1 + moved·k/to)/from.
	return math.Max(toCap, fromCap/(1+moved*k/float64(to)))
}
