package plan

import (
	"fmt"
	"math/big"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/strata-dev/strata/api/v1alpha1"
)

// Retention: how long each data class is kept, and the settings that keep every volume from
// filling at the planned rate.
//
// Kafka. retention.bytes bounds each partition, not the topic; after each retention check
// Kafka deletes whole segments from the oldest while the log stays at or above retention.bytes
// without that segment (UnifiedLog.deleteRetentionSizeBreachedSegments in
// core/src/main/scala/kafka/log/UnifiedLog.scala, apache/kafka), and never the active segment.
// So a partition can hold retention.bytes plus up to two segments, and the log grows for up to
// log.retention.check.interval.ms (300000 by default) between checks. A broker holds
// ⌈partitions × RF ÷ brokers⌉ partition replicas. The plan picks segment.bytes and
// retention.bytes so that all of that stays under kafkaSafePercent of the log volume (a full
// log directory takes the broker offline), and under cruiseControlDiskPercent of the claim's
// declared size: Strimzi declares that size to Cruise Control as the broker's disk capacity
// (strimzi-kafka-operator 1.2.0, cluster-operator/src/main/java/io/strimzi/operator/cluster/
// model/cruisecontrol/Capacity.java, generateJbodDiskCapacity: each JBOD volume's size), whatever
// the local disk behind the claim holds, and Cruise Control's DiskCapacityGoal, a hard goal,
// refuses every proposal — add-brokers and remove-brokers alike — that leaves a broker above
// disk.capacity.threshold of it (0.8 by default: cruise-control AnalyzerConfig,
// DEFAULT_DISK_CAPACITY_THRESHOLD). Over it, once retention fills, no broker could join or leave.
//
// Elasticsearch. Each record is stored 1 + replicas times. Elasticsearch blocks writes at the
// flood-stage watermark (95 %) and moves shards away at the high watermark (90 %); the plan
// keeps a data node under esSafePercent (the high watermark less 5 points of headroom). Indices
// roll over by max_age (and max_primary_shard_size) and are deleted delete-after past rollover,
// so a node holds at most (max_age + delete-after + two ILM polls) of writes.
//
// Spill and shuffle data live as long as a job's stages; their retention is how long a volume
// takes to fill at the executor's input rate.

// The figures below cite their source; "an estimate" is Strata's own figure, not measured. None
// is overridable: the spec sizes the volumes (spec.kafka.storage.size,
// spec.elasticsearch.storage.size) and the retention (spec.kafka.retention) they apply to.
const (
	// kafkaSafePercent: an estimate, the headroom kept on a broker's log volume.
	kafkaSafePercent = 85
	// cruiseControlDiskPercent is Cruise Control's disk.capacity.threshold (80 %) less a margin
	// of 5 points: a rebalance moves replicas onto brokers that already hold their share.
	cruiseControlDiskPercent   = 75
	kafkaRetentionCheckSeconds = 300      // log.retention.check.interval.ms default
	kafkaMaxSegmentBytes       = 1 << 30  // Kafka's default segment.bytes
	kafkaMinSegmentBytes       = 16 << 20 // an estimate: small segments mean many files; below this, refuse
	// esSafePercent is Elasticsearch's high disk watermark (cluster.routing.allocation.disk.
	// watermark.high, 90 % by default: Elasticsearch reference, "Disk-based shard allocation
	// settings") less 5 points of headroom.
	esSafePercent = 85
	esPollSeconds = 600 // indices.lifecycle.poll_interval default (10m)
	// esMaxRolloverBytes: Elasticsearch's advice of primary shards of at most 50 GB
	// (Elasticsearch reference, "Size your shards"), the max_primary_shard_size of its built-in
	// ILM policies.
	esMaxRolloverBytes = 50 << 30
	// esMaxRolloverSeconds: an estimate, a day's index at most, so that deletion stays fine
	// grained on a slow pipeline.
	esMaxRolloverSeconds = 86400
	// defaultElasticsearchReplicas is the API's default of spec.elasticsearch.replicas.
	defaultElasticsearchReplicas = 1
	// segmentsPerPartitionSlack: Kafka keeps retention.bytes plus up to two segments per
	// partition (UnifiedLog.deleteRetentionSizeBreachedSegments, above).
	segmentsPerPartitionSlack = 2
	// rolloversPerRetentionFraction: an estimate, a segment (or an index) is at most a tenth of
	// what is retained, so that deleting one frees a tenth, not the half.
	rolloversPerRetentionFraction = 10
)

// kafkaRetention is the topic's retention settings and what they keep.
type kafkaRetention struct {
	retentionBytes, segmentBytes, retentionMs, seconds int64
}

// planKafkaRetention sizes retention.bytes for the log volume and the size its claim declares.
// diskWrite is the busiest broker's log write rate: that of the held replicas.
func planKafkaRetention(k v1alpha1.KafkaSpec, partitions, brokers int32, volume, declared resource.Quantity,
	diskWrite *big.Rat, why *reasons) kafkaRetention {
	if partitions <= 0 || brokers <= 0 || diskWrite.Sign() <= 0 {
		return kafkaRetention{}
	}
	held := ceilInt(quo(ratInt(int64(partitions)*int64(k.ReplicationFactor)), ratInt(int64(brokers)))).Int64()
	safe := minRat(pct(ratOf(volume), kafkaSafePercent), pct(ratOf(declared), cruiseControlDiskPercent))
	free := new(big.Rat).Sub(safe, mul(diskWrite, ratInt(kafkaRetentionCheckSeconds)))
	perPartition := floor64(quo(free, ratInt(held)))
	segment := min(int64(kafkaMaxSegmentBytes), perPartition/rolloversPerRetentionFraction)
	out := kafkaRetention{segmentBytes: max(segment, kafkaMinSegmentBytes)}
	out.retentionBytes = perPartition - segmentsPerPartitionSlack*out.segmentBytes
	if segment < kafkaMinSegmentBytes || out.retentionBytes <= 0 {
		why.add("spec.kafka.storage.size (%s) cannot hold %d partition replicas per broker: each needs at least %s "+
			"(Kafka deletes whole segments only). Raise spec.kafka.storage.size or lower spec.kafka.topic.partitions",
			volume.String(), held, bytesString(10*kafkaMinSegmentBytes))
		out.retentionBytes = max(out.retentionBytes, 0)
		return out
	}
	out.seconds = floor64(quo(ratInt(held*out.retentionBytes), diskWrite))
	if k.Retention != nil {
		out.retentionMs = k.Retention.Milliseconds()
		if asked := k.Retention.Duration.Seconds(); asked > float64(out.seconds) {
			why.add("spec.kafka.retention (%s) does not fit on the brokers' log volumes: at %s per broker, "+
				"%s hours fit. Raise spec.kafka.storage.size or spec.kafka.brokers, or lower spec.kafka.retention",
				k.Retention.Duration.String(), rateString(diskWrite), hoursString(out.seconds))
		} else {
			out.seconds = int64(asked)
		}
	}
	return out
}

// esRetention is the index lifecycle the plan chose.
type esRetention struct {
	replicas                             int32
	rolloverBytes, rolloverSeconds       int64
	deleteAfterSeconds, writePerNodeRate int64
}

// planESRetention sizes the lifecycle policy for one data node's volume.
func planESRetention(w workload, replicas, shards, dataNodes int32, volume resource.Quantity, why *reasons) esRetention {
	out := esRetention{replicas: replicas}
	if dataNodes <= 0 || w.ingest.Sign() <= 0 {
		return out
	}
	copies := ratInt(int64(1 + replicas))
	rate := quo(mul(w.ingest, copies), ratInt(int64(dataNodes)))
	out.writePerNodeRate = floor64(rate)
	budget := pct(ratOf(volume), esSafePercent)
	window := floor64(quo(budget, rate)) - 2*esPollSeconds
	perNode := max(1, ceilInt(quo(mul(ratInt(int64(shards)), copies), ratInt(int64(dataNodes)))).Int64())
	out.rolloverBytes = min(int64(esMaxRolloverBytes), floor64(quo(budget, ratInt(perNode*rolloversPerRetentionFraction))))
	out.rolloverSeconds = min(int64(esMaxRolloverSeconds), window/rolloversPerRetentionFraction)
	out.deleteAfterSeconds = window - out.rolloverSeconds
	if out.rolloverSeconds <= 0 || out.deleteAfterSeconds <= 0 {
		why.add("spec.elasticsearch.storage.size (%s) fills in less than %d minutes at %s per data node: "+
			"raise spec.elasticsearch.storage.size or spec.elasticsearch.dataNodes",
			volume.String(), 2*esPollSeconds/60, rateString(rate))
		out.rolloverSeconds, out.deleteAfterSeconds = max(out.rolloverSeconds, 0), max(out.deleteAfterSeconds, 0)
	}
	return out
}

// fillSeconds is how long a volume takes to fill at a rate.
func fillSeconds(volume resource.Quantity, rate *big.Rat) int64 {
	if rate.Sign() <= 0 {
		return 0
	}
	return floor64(quo(ratOf(volume), rate))
}

func hoursString(seconds int64) string { return fmt.Sprintf("%.1f", float64(seconds)/3600) }

// retentionInputs is what planRetention needs from the counts the plan chose.
type retentionInputs struct {
	partitions, shards, brokers, dataNodes int32
	brokerWrite, executorWrite             *big.Rat
}

// planRetention chooses the retention settings and fills in each placement's write rate and
// retention.
func planRetention(s *v1alpha1.AnalyticsPipelineSpec, w workload, ts tierSet, ps []placement,
	in retentionInputs, why *reasons) v1alpha1.RetentionPlan {
	vol := func(i int) resource.Quantity { return realVolume(ts[ps[i].tier], ps[i].size) }
	k := planKafkaRetention(s.Kafka, in.partitions, in.brokers, vol(0), claimSize(ts[ps[0].tier], ps[0].size), in.brokerWrite, why)
	es := planESRetention(w, *s.Elasticsearch.Replicas, in.shards, in.dataNodes, vol(3), why)
	ps[0].write, ps[0].retention = in.brokerWrite, k.seconds
	for i := 1; i <= 2; i++ {
		ps[i].write, ps[i].retention = in.executorWrite, fillSeconds(vol(i), in.executorWrite)
	}
	ps[3].write, ps[3].retention = ratInt(es.writePerNodeRate), es.deleteAfterSeconds
	return v1alpha1.RetentionPlan{
		KafkaRetentionBytes:             k.retentionBytes,
		KafkaSegmentBytes:               k.segmentBytes,
		KafkaRetentionMs:                k.retentionMs,
		ElasticsearchReplicas:           es.replicas,
		ElasticsearchRolloverBytes:      es.rolloverBytes,
		ElasticsearchRolloverSeconds:    es.rolloverSeconds,
		ElasticsearchDeleteAfterSeconds: es.deleteAfterSeconds,
	}
}
