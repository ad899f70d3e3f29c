package plan

import (
	"fmt"
	"math/big"

	"github.com/strata-dev/strata/api/v1alpha1"
)

// The network model: link rates, and the broker count they imply.
//
// A Kafka broker in a replicated cluster is usually limited by its network link before its CPU
// or disk (docs/studies.md §1.1: two brokers on 1 Gbit/s saturated their outbound links at 10,112
// records/s of 9,028 bytes). Kafka places whole partitions, not bytes: with P partitions,
// replication factor R, B brokers, ingest I and consumer read rate C (bytes/s), every replica of
// a partition receives I/P (the leader from producers, each follower from its leader) and every
// leader sends C/P to consumers and I·(R−1)/P to its followers. Replicas and leaders are spread
// as evenly as whole partitions allow, so the busiest broker holds ⌈P·R/B⌉ replicas and leads
// ⌈P/B⌉ partitions, and
//
//	receives I·⌈P·R/B⌉/P            (from producers and from the leaders it follows)
//	sends    (C + I·(R−1))·⌈P/B⌉/P  (to consumers and to its followers)
//	writes   everything it receives to its log
//
// When B divides P (and so P·R) that is the mean, 1/B of the cluster's traffic each way; when it
// does not, the busiest broker carries more: 10 partitions on 3 brokers put 4 leaders on one of
// them, which then sends a fifth more than the mean (docs/lab.md, "The bandwidth model against
// shaped links", measured it). The plan sizes that busiest broker: it picks the smallest B whose
// busiest broker keeps the larger of the two link directions under the planned link rate, its
// log writes under the log tier's planned write bandwidth, and what it moves under its CPU.

// linkRates is one node's link: usable is what the wire carries after protocol overhead
// (bits ÷ 8 × efficiency), planned is the share of it the plan may fill (× target utilization).
type linkRates struct {
	usable, planned *big.Rat
}

func newLinkRates(n v1alpha1.NetworkSpec) linkRates {
	usable := pct(quo(ratOf(n.LinkBitsPerSecond), big.NewRat(8, 1)), n.EfficiencyPercent)
	return linkRates{usable: usable, planned: pct(usable, n.TargetUtilizationPercent)}
}

// workload is the load in the units the models use.
type workload struct {
	messagesPerSecond, consumerMessagesPerSecond, messageBytes int64
	// ingest and consume are I and C in bytes per second.
	ingest, consume *big.Rat
	target          int32
}

func newWorkload(s *v1alpha1.AnalyticsPipelineSpec) workload {
	w := s.Workload
	return workload{
		messagesPerSecond:         w.MessagesPerSecond,
		consumerMessagesPerSecond: w.ConsumerMessagesPerSecond,
		messageBytes:              w.MessageBytes,
		ingest:                    ratInt(w.MessagesPerSecond * w.MessageBytes),
		consume:                   ratInt(w.ConsumerMessagesPerSecond * w.MessageBytes),
		target:                    s.Network.TargetUtilizationPercent,
	}
}

// brokerTraffic is what one partition puts on the brokers: every replica receives perReplica
// and every leader sends perLeader. A broker's share is a whole number of each.
type brokerTraffic struct {
	perReplica, perLeader   *big.Rat
	partitions, replication int64
}

func newBrokerTraffic(w workload, replication, partitions int32) brokerTraffic {
	p := int64(max(partitions, 1))
	followers := ratInt(int64(replication - 1))
	return brokerTraffic{
		perReplica:  quo(w.ingest, ratInt(p)),
		perLeader:   quo(new(big.Rat).Add(w.consume, mul(w.ingest, followers)), ratInt(p)),
		partitions:  p,
		replication: int64(replication),
	}
}

// ceilDiv returns ⌈a/b⌉ for a ≥ 0, b > 0.
func ceilDiv(a, b int64) int64 { return (a + b - 1) / b }

// replicas and leaders are what the busiest of b brokers holds and leads.
func (t brokerTraffic) replicas(b int64) int64 { return ceilDiv(t.partitions*t.replication, b) }
func (t brokerTraffic) leaders(b int64) int64  { return ceilDiv(t.partitions, b) }

// receive, send and total are the busiest of b brokers' rates. The broker holding the most
// replicas need not be the one leading the most partitions; their sum bounds what any broker
// moves, which its CPU handles.
func (t brokerTraffic) receive(b int64) *big.Rat { return mul(t.perReplica, ratInt(t.replicas(b))) }
func (t brokerTraffic) send(b int64) *big.Rat    { return mul(t.perLeader, ratInt(t.leaders(b))) }
func (t brokerTraffic) total(b int64) *big.Rat   { return new(big.Rat).Add(t.receive(b), t.send(b)) }

// busiest is the busier link direction of the busiest broker: a link is full-duplex, so each
// direction has the whole link rate, and the busier one decides.
func (t brokerTraffic) busiest(b int64) *big.Rat {
	s, r := t.send(b), t.receive(b)
	if s.Cmp(r) > 0 {
		return s
	}
	return r
}

// brokersNeeded is the smallest broker count whose busiest broker's load stays within limit,
// or nil when none does. Adding brokers stops helping at P·R: every broker then holds at most
// one replica, so when even that is over the limit a single partition's traffic is too much.
// The loads never grow with the count, so a binary search finds it.
func (t brokerTraffic) brokersNeeded(load func(b int64) *big.Rat, limit *big.Rat) *big.Int {
	hi := t.partitions * t.replication
	if load(hi).Cmp(limit) > 0 {
		return nil
	}
	lo := int64(1)
	for lo < hi {
		mid := lo + (hi-lo)/2
		if load(mid).Cmp(limit) <= 0 {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return big.NewInt(lo)
}

// brokerPlan is the chosen broker count and what its busiest broker then carries.
type brokerPlan struct {
	count                       int32
	receive, send, diskWrite    *big.Rat
	diskPlanned, diskWriteLimit *big.Rat
}

// planBrokers picks the broker count. Never fewer than the replication factor: Kafka cannot
// place R replicas of a partition on fewer than R brokers.
func planBrokers(w workload, link linkRates, k v1alpha1.KafkaSpec, partitions int32, logTier *v1alpha1.StorageTier, cpuBytes *big.Rat, why *reasons) brokerPlan {
	traffic := newBrokerTraffic(w, k.ReplicationFactor, partitions)
	// The bandwidth a log volume of the planned size really gets (it may scale with size).
	write := volumeBandwidth(logTier, realVolume(logTier, k.Storage.Size), true)
	diskPlanned := pct(write, w.target)
	cpuPlanned := pct(cpuBytes, w.target)

	linkNeed := traffic.brokersNeeded(traffic.busiest, link.planned)
	diskNeed := traffic.brokersNeeded(traffic.receive, diskPlanned)
	// The brokers' CPU (spec.kafka.resources.cpu, or planned to fill the link both ways).
	cpuNeed := traffic.brokersNeeded(traffic.total, cpuPlanned)
	maxCount := big.NewInt(int64(k.Brokers.Max))
	need := big.NewInt(0)
	for _, n := range []*big.Int{linkNeed, diskNeed, cpuNeed} {
		if n == nil {
			need = new(big.Int).Add(maxCount, big.NewInt(1))
			break
		}
		if n.Cmp(need) > 0 {
			need = n
		}
	}
	lo := max(k.Brokers.Min, k.ReplicationFactor)
	count, _ := fitCount(need, lo, k.Brokers.Max)
	b := int64(count)
	p := brokerPlan{
		count:          count,
		receive:        traffic.receive(b),
		send:           traffic.send(b),
		diskWrite:      traffic.receive(b),
		diskPlanned:    diskPlanned,
		diskWriteLimit: write,
	}
	// A nil need is "no count": more than any count.
	over := func(n *big.Int) bool { return n == nil || n.Cmp(maxCount) > 0 }
	beyond := func(a, b *big.Int) bool { return b != nil && (a == nil || a.Cmp(b) > 0) }
	// Automatic partitions follow the brokers (partitionsAndBrokers): when they are spread evenly,
	// the count to name is the one whose even share fits, since raising brokers.max to it
	// rounds the partitions to a multiple of it too; the count needed at these P partitions may
	// be larger (the sample with spec.kafka.resources.cpu: 500m needs 10 brokers, which its 20
	// executor cores divide, but 12 for the 24 partitions the 6 brokers of brokers.max get).
	even := k.Topic.Partitions == 0 && traffic.partitions%b == 0
	needed := func(n *big.Int, load func(int64) *big.Rat, limit *big.Rat) string {
		if even && limit.Sign() > 0 {
			n = ceilInt(quo(load(1), limit)) // one broker carries the whole cluster's load
		}
		if n != nil {
			return countString(n) + " are needed"
		}
		return fmt.Sprintf("no count is enough: one of the %d partitions alone puts more than %s on a broker, "+
			"so raise spec.kafka.topic.partitions", traffic.partitions, rateString(limit))
	}

	// Reasons avoid "; ": Plan.Unsatisfied joins them with it.
	if over(linkNeed) {
		why.add("no broker count up to spec.kafka.brokers.max (%d) keeps each broker under %s "+
			"(%d%% of the %s usable link): the busiest of %d brokers (%d of %d partitions led, %d replicas) "+
			"would send %s and receive %s, and %s. "+
			"Raise spec.kafka.brokers.max, use a faster link, or enable record compression (costs CPU)",
			k.Brokers.Max, rateString(link.planned), w.target, rateString(link.usable),
			count, traffic.leaders(b), traffic.partitions, traffic.replicas(b),
			rateString(p.send), rateString(p.receive), needed(linkNeed, traffic.busiest, link.planned))
	}
	// Planned, the CPU fills the link both ways and never needs more brokers than the link does;
	// it is named only where it binds (an override, or the largest CPU the plan gives a pod).
	if over(cpuNeed) && beyond(cpuNeed, linkNeed) {
		why.add("no broker count up to spec.kafka.brokers.max (%d) keeps each broker's traffic under %s "+
			"(%d%% of what its CPU moves, received plus sent): the busiest of %d brokers would move %s, "+
			"and %s. Raise spec.kafka.resources.cpu or spec.kafka.brokers.max",
			k.Brokers.Max, rateString(cpuPlanned), w.target,
			count, rateString(new(big.Rat).Add(p.receive, p.send)), needed(cpuNeed, traffic.total, cpuPlanned))
	}
	if over(diskNeed) {
		why.add("no broker count up to spec.kafka.brokers.max (%d) keeps each broker's log writes under %s "+
			"(%d%% of StorageTier %q's %s write bandwidth): the busiest of %d brokers would write %s, and %s. "+
			"Raise spec.kafka.brokers.max or put spec.kafka.storage on a faster tier",
			k.Brokers.Max, rateString(diskPlanned), w.target, logTier.Name, rateString(write),
			count, rateString(p.diskWrite), needed(diskNeed, traffic.receive, diskPlanned))
	}
	return p
}

// producerSend is what one producer node sends; the operator does not run the producers, so a
// saturated producer link cannot be planned away, only reported.
func producerSend(w workload, link linkRates, producers int32, why *reasons) *big.Rat {
	send := quo(w.ingest, ratInt(int64(producers)))
	if send.Cmp(link.planned) > 0 {
		need := ceilInt(quo(w.ingest, link.planned))
		why.add("with spec.workload.producers = %d each producer node sends %s, over the %s planned per link "+
			"(%d%% of %s usable), and %s producers are needed: add producer nodes or give them a faster link",
			producers, rateString(send), rateString(link.planned), w.target, rateString(link.usable),
			countString(need))
	}
	return send
}

// Counts of the processing stages: Spark executors, the topic's partitions, Elasticsearch data
// nodes and the index's shards.
//
// Executors and data nodes are sized like the brokers: the smallest count within the spec's
// bounds that carries the ingest at the target utilization, given each one's measured rate.
// Executors must also be able to read their share of the consumer traffic over their own link
// and write it to their shuffle volumes (shuffledisk.go), so the executor count is the largest
// of the three requirements (docs/planning.md, "Spark executors and partitions").

// neededFor returns ⌈rate·100 / (perUnit·target)⌉: how many units, each running at target % of
// perUnit, carry rate.
func neededFor(rate, perUnit int64, target int32) *big.Int {
	return ceilInt(quo(ratInt(rate*100), mul(ratInt(perUnit), ratInt(int64(target)))))
}

// executorPlan is the chosen executor count and each executor's share of the consumer traffic.
type executorPlan struct {
	count   int32
	receive *big.Rat
}

func planExecutors(w workload, link linkRates, sp v1alpha1.SparkSpec, disks shuffleDisks, why *reasons) executorPlan {
	e := sp.Executors
	processNeed := neededFor(w.messagesPerSecond, sp.MessagesPerSecondPerExecutor, w.target)
	linkNeed := ceilInt(quo(w.consume, link.planned))
	// Each executor writes what it reads to its spill and shuffle data volumes (shuffledisk.go).
	diskNeed := disks.executors()
	need := processNeed
	for _, n := range []*big.Int{linkNeed, diskNeed} {
		if n.Cmp(need) > 0 {
			need = n
		}
	}
	count, _ := fitCount(need, e.Min, e.Max)
	p := executorPlan{count: count, receive: quo(w.consume, ratInt(int64(count)))}

	maxCount := big.NewInt(int64(e.Max))
	if processNeed.Cmp(maxCount) > 0 {
		why.add("no executor count up to spec.spark.executors.max (%d) processes %d msgs/s at %d%% of "+
			"spec.spark.messagesPerSecondPerExecutor (%d): %s executors are needed. Raise spec.spark.executors.max "+
			"or make each executor faster",
			e.Max, w.messagesPerSecond, w.target, sp.MessagesPerSecondPerExecutor, countString(processNeed))
	}
	if linkNeed.Cmp(maxCount) > 0 {
		why.add("no executor count up to spec.spark.executors.max (%d) keeps each executor's Kafka reads under "+
			"the %s planned per link: %d executors would each read %s, and %s are needed. Raise "+
			"spec.spark.executors.max or use a faster link",
			e.Max, rateString(link.planned), count, rateString(p.receive), countString(linkNeed))
	}
	disks.explain(w, sp, count, why)
	return p
}

// planDataNodes sizes the data nodes for every copy of every record: a replica shard indexes
// the document again (in Elasticsearch's data replication model the primary forwards each
// indexing operation to every replica, which runs it itself: elasticsearch 8.x,
// docs/reference/docs/data-replication.asciidoc, "Basic write model"), so spec.elasticsearch.messagesPerSecondPerNode is shared by the
// IndexCopies copies.
func planDataNodes(w workload, es v1alpha1.ElasticsearchSpec, perNode int64, why *reasons) int32 {
	copies := IndexCopies(es)
	need := neededFor(w.messagesPerSecond*int64(copies), perNode, w.target)
	count, ok := fitCount(need, es.DataNodes.Min, es.DataNodes.Max)
	if !ok {
		per := fmt.Sprintf("spec.elasticsearch.messagesPerSecondPerNode (%d)", es.MessagesPerSecondPerNode)
		if perNode < es.MessagesPerSecondPerNode {
			per = fmt.Sprintf("the %d per node its CPU indexes (spec.elasticsearch.resources.cpu)", perNode)
		}
		why.add("no data node count up to spec.elasticsearch.dataNodes.max (%d) indexes %d msgs/s, each %d times "+
			"(1 + spec.elasticsearch.replicas) at %d%% of %s: %s data "+
			"nodes are needed. Raise spec.elasticsearch.dataNodes.max or make each node faster",
			es.DataNodes.Max, w.messagesPerSecond, copies, w.target, per, countString(need))
	}
	return count
}

// IndexCopies is how many times each record is indexed: the primary and every replica
// (spec.elasticsearch.replicas, default 1).
func IndexCopies(es v1alpha1.ElasticsearchSpec) int32 {
	if es.Replicas == nil {
		return 1 + defaultElasticsearchReplicas
	}
	return 1 + max(*es.Replicas, 0)
}

// shards follows the data node count unless the spec fixes it, so that every data node indexes
// a primary (docs/studies.md §1.1: shards and executors should follow the node count).
func shards(es v1alpha1.ElasticsearchSpec, dataNodes int32) int32 {
	if es.Shards > 0 {
		return es.Shards
	}
	return dataNodes
}

// minInSyncReplicas is spec.kafka.minInSyncReplicas when set, else R−1 but at least 2 (and at
// most R): an acknowledged write is then on two brokers or more and survives the loss of one
// broker's volume — on local NVMe a node's loss takes its volume with it. R−1 keeps producers
// writing while one broker is down (a failure, or Strimzi rolling the brokers one at a time);
// with R = 2 the floor of 2 does not: a broker down refuses acks=all writes to the partitions
// it holds (docs/planning.md). Only R = 1 gets 1.
func minInSyncReplicas(k v1alpha1.KafkaSpec) int32 {
	if k.MinInSyncReplicas != nil {
		return *k.MinInSyncReplicas
	}
	return min(k.ReplicationFactor, max(2, k.ReplicationFactor-1))
}
