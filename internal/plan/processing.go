package plan

import (
	"math/big"

	"github.com/strata-dev/strata/api/v1alpha1"
)

// Counts of the processing stages: Spark executors, the topic's partitions, Elasticsearch data
// nodes and the index's shards.
//
// Executors and data nodes are sized like the brokers: the smallest count within the spec's
// bounds that carries the ingest at the target utilisation, given each one's measured rate.
// Executors must also be able to read their share of the consumer traffic over their own link,
// so the executor count is the larger of the two requirements (DESIGN.md §3.1: "also check
// producers' and executors' links").

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

func planDataNodes(w workload, es v1alpha1.ElasticsearchSpec, why *reasons) int32 {
	need := neededFor(w.messagesPerSecond, es.MessagesPerSecondPerNode, w.target)
	count, ok := fitCount(need, es.DataNodes.Min, es.DataNodes.Max)
	if !ok {
		why.add("no data node count up to spec.elasticsearch.dataNodes.max (%d) indexes %d msgs/s at %d%% of "+
			"spec.elasticsearch.messagesPerSecondPerNode (%d): %s data nodes are needed. Raise "+
			"spec.elasticsearch.dataNodes.max or make each node faster",
			es.DataNodes.Max, w.messagesPerSecond, w.target, es.MessagesPerSecondPerNode, countString(need))
	}
	return count
}

// shards follows the data node count unless the spec fixes it, so that every data node indexes
// a primary (DESIGN.md §1.1: shards and executors should follow the node count).
func shards(es v1alpha1.ElasticsearchSpec, dataNodes int32) int32 {
	if es.Shards > 0 {
		return es.Shards
	}
	return dataNodes
}

// minInSyncReplicas lets acknowledged writes survive the loss of one broker: R−1, at least 1.
func minInSyncReplicas(replication int32) int32 {
	return max(1, replication-1)
}
