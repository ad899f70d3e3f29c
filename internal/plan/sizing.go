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
// records/s of 9,028 bytes). With B brokers, replication factor R, ingest I and consumer read
// rate C (bytes/s), and leaders spread evenly, each broker
//
//	receives I/B from producers + I·(R−1)/B from the leaders it follows  = I·R/B
//	sends    C/B to consumers   + I·(R−1)/B to its followers             = (C + I·(R−1))/B
//	writes   everything it receives to its log                          = I·R/B
//
// and the plan picks the smallest B that keeps the larger of the two link directions under the
// planned link rate and the log writes under the log tier's planned write bandwidth.

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

// brokerTraffic is the whole cluster's broker traffic: the sum over brokers of what each
// receives and sends. Dividing by B gives one broker's share.
type brokerTraffic struct {
	receive, send *big.Rat
}

func newBrokerTraffic(w workload, replication int32) brokerTraffic {
	followers := ratInt(int64(replication - 1))
	return brokerTraffic{
		receive: mul(w.ingest, ratInt(int64(replication))),
		send:    new(big.Rat).Add(w.consume, mul(w.ingest, followers)),
	}
}

// total is what the brokers receive and send together, which their CPUs handle.
func (t brokerTraffic) total() *big.Rat { return new(big.Rat).Add(t.receive, t.send) }

// busiest is the larger link direction's cluster total: a link is full-duplex, so each
// direction has the whole link rate, and the busier one decides.
func (t brokerTraffic) busiest() *big.Rat {
	if t.send.Cmp(t.receive) > 0 {
		return t.send
	}
	return t.receive
}

// brokerPlan is the chosen broker count and what each broker then carries.
type brokerPlan struct {
	count                       int32
	receive, send, diskWrite    *big.Rat
	linkNeed, diskNeed          *big.Int
	diskPlanned, diskWriteLimit *big.Rat
}

// planBrokers picks the broker count. Never fewer than the replication factor: Kafka cannot
// place R replicas of a partition on fewer than R brokers.
func planBrokers(w workload, link linkRates, k v1alpha1.KafkaSpec, logTier *v1alpha1.StorageTier, cpuBytes *big.Rat, why *reasons) brokerPlan {
	traffic := newBrokerTraffic(w, k.ReplicationFactor)
	// The bandwidth a log volume of the planned size really gets (it may scale with size).
	write := volumeBandwidth(logTier, realVolume(logTier, k.Storage.Size), true)
	diskPlanned := pct(write, w.target)

	linkNeed := ceilInt(quo(traffic.busiest(), link.planned))
	diskNeed := ceilInt(quo(traffic.receive, diskPlanned))
	// The brokers' CPU (spec.kafka.resources.cpu, or planned to fill the link both ways).
	cpuNeed := ceilInt(quo(traffic.total(), pct(cpuBytes, w.target)))
	need := linkNeed
	for _, n := range []*big.Int{diskNeed, cpuNeed} {
		if n.Cmp(need) > 0 {
			need = n
		}
	}
	lo := max(k.Brokers.Min, k.ReplicationFactor)
	count, _ := fitCount(need, lo, k.Brokers.Max)
	b := ratInt(int64(count))
	p := brokerPlan{
		count:          count,
		receive:        quo(traffic.receive, b),
		send:           quo(traffic.send, b),
		diskWrite:      quo(traffic.receive, b),
		linkNeed:       linkNeed,
		diskNeed:       diskNeed,
		diskPlanned:    diskPlanned,
		diskWriteLimit: write,
	}

	// Reasons avoid "; ": Plan.Unsatisfied joins them with it.
	if linkNeed.Cmp(big.NewInt(int64(k.Brokers.Max))) > 0 {
		why.add("no broker count up to spec.kafka.brokers.max (%d) keeps each broker under %s "+
			"(%d%% of the %s usable link): %d brokers would each send %s and receive %s, and %s are needed. "+
			"Raise spec.kafka.brokers.max, use a faster link, or enable record compression (costs CPU)",
			k.Brokers.Max, rateString(link.planned), w.target, rateString(link.usable),
			count, rateString(p.send), rateString(p.receive), countString(linkNeed))
	}
	// Planned, the CPU fills the link both ways and never needs more brokers than the link does;
	// it is named only where it binds (an override, or the largest CPU the plan gives a pod).
	if cpuNeed.Cmp(big.NewInt(int64(k.Brokers.Max))) > 0 && cpuNeed.Cmp(linkNeed) > 0 {
		why.add("no broker count up to spec.kafka.brokers.max (%d) keeps each broker's traffic under %s "+
			"(%d%% of what its CPU moves, received plus sent): %d brokers would each move %s, "+
			"and %s are needed. Raise spec.kafka.resources.cpu or spec.kafka.brokers.max",
			k.Brokers.Max, rateString(pct(cpuBytes, w.target)), w.target,
			count, rateString(new(big.Rat).Add(p.receive, p.send)), countString(cpuNeed))
	}
	if diskNeed.Cmp(big.NewInt(int64(k.Brokers.Max))) > 0 {
		why.add("no broker count up to spec.kafka.brokers.max (%d) keeps each broker's log writes under %s "+
			"(%d%% of StorageTier %q's %s write bandwidth): %d brokers would each write %s, and %s are needed. "+
			"Raise spec.kafka.brokers.max or put spec.kafka.storage on a faster tier",
			k.Brokers.Max, rateString(diskPlanned), w.target, logTier.Name, rateString(write),
			count, rateString(p.diskWrite), countString(diskNeed))
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
// Executors must also be able to read their share of the consumer traffic over their own link,
// so the executor count is the larger of the two requirements (docs/planning.md,
// "Spark executors and partitions").

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

func planExecutors(w workload, link linkRates, sp v1alpha1.SparkSpec, why *reasons) executorPlan {
	e := sp.Executors
	processNeed := neededFor(w.messagesPerSecond, sp.MessagesPerSecondPerExecutor, w.target)
	linkNeed := ceilInt(quo(w.consume, link.planned))
	need := processNeed
	if linkNeed.Cmp(need) > 0 {
		need = linkNeed
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
	return p
}

// partitions returns the topic's partition count. Spark's Kafka source runs one task per
// partition, so "auto" gives every executor core a partition; a fixed count is the user's call
// and is kept even when it leaves cores idle (the CLI points that out).
func partitions(k v1alpha1.KafkaSpec, executors, cores int32) int32 {
	if k.Topic.Partitions > 0 {
		return k.Topic.Partitions
	}
	return executors * cores
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
