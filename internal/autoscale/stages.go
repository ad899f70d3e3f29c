package autoscale

import (
	"fmt"
	"math"

	"github.com/strata-dev/strata/api/v1alpha1"
)

// What each stage after the readings needs: the brokers from their links' traffic (and whether
// any may leave now), the data nodes from the indexing they must carry. The executors' sizing,
// which reads the job's rates, memory and cache, is executors.go's.

// brokerReading: brokers needed so that the busier direction of the busiest broker's link
// stays under the usable link rate times the target (docs/planning.md), from the pods' measured
// traffic, or from Kafka's byte counters when the pods' network metrics are missing. The
// signals are the cluster's totals; Kafka places whole partitions, so a count that does not
// divide them leaves one broker with more than its mean share, and the count is the one whose
// busiest broker fits, as the plan sizes it (plan.PartitionPlacement).
//
// With the ingest known, the traffic is scaled to the demand (demand.go): while the intake is
// saturated the links carry the capped ingest, and sizing on them would add one broker per
// step. The job's reads beyond the ingest (a lag draining) are left out of the traffic held to
// the target; draining the lag within the catch-up time may use the headroom up to the whole
// usable link, as the executors' catch-up does.
func (r *recommender) brokerReading(cur State, d demand) (reading, bool) {
	tx, rx, source, ok := r.linkTraffic()
	link := float64(r.pol.LinkUsableBytesPerSecond)
	if !ok || link <= 0 {
		return reading{}, false
	}
	pl := cur.Placement
	t := r.pol.TargetUtilizationPercent
	limit := link * float64(t) / 100
	rd := reading{
		up:         pl.BrokersFor(rx, tx, limit),
		down:       pl.BrokersFor(rx, tx, link*float64(t-margin(t))/100),
		upReason:   "LinkSaturated",
		downReason: "LinkUnderused",
	}
	busiest, dir := tx, "send"
	if rx > tx {
		busiest, dir = rx, "receive"
	}
	rd.what = fmt.Sprintf("brokers %s %s in all (%s counters)", dir, rate(busiest), source)
	if d.known && d.ingest > 0 && rx > 0 {
		perRecord, steadyTx := d.steadyTraffic(tx, rx, pl)
		k := d.rate / d.ingest
		rd.up = max(pl.BrokersFor(rx*k, steadyTx*k, limit), pl.BrokersFor(rx*k, steadyTx*k+d.drain*perRecord, link))
		switch {
		case d.flushing:
			// The headroom the target keeps is there for catching up, as for the executors;
			// and a lag in Kafka drains at whatever the links leave.
			rd.up = pl.BrokersFor(rx, steadyTx, link)
			rd.what += "; " + d.describe()
		case d.measured:
			rd.upReason, rd.atOnce = "IntakeSaturated", true
			rd.what += "; " + d.describe()
		case d.capped:
			// The demand is an estimate that bounds it from above (the probe, or what the
			// brokers applied carry): it is sized at the whole usable link, as demand.units
			// sizes the other stages. The target's margin is for a measured demand; kept on
			// the probe, it would ask for 2.5 times the brokers that carried the saturated
			// ingest, where doubling them moves their load as fast (a joining broker takes
			// its share from the old ones, which send no faster for more receivers: see
			// docs/simulate.md) and, once the demand is measured, leaves no surplus to give
			// back on a step up to twice the saturated ingest at the link (1.6 times at the
			// target, beyond which the measured demand asks for a second step).
			rd.up = pl.BrokersFor(rx*k, steadyTx*k+d.drain*perRecord, link)
			if !d.inFlight {
				rd.up = min(rd.up, r.probeBrokers(cur, rx, steadyTx))
			}
			rd.upReason, rd.atOnce = "IntakeSaturated", true
			rd.what += "; " + d.describe()
		}
	}
	if r.held {
		rd.down = max(rd.up, cur.Brokers)
	}
	rd.what += fmt.Sprintf("; %d%% of the %s usable link on the busiest broker takes %d brokers", t, rate(link), rd.up)
	return rd, true
}

// brokerGate holds a broker change back: a scale-up while Strimzi removes brokers (it carries
// the removal to its end whatever the pool asks for, so a broker asked back would stay without
// its partitions: reversal.go; the brokers are added once it has), and a scale-down unless
// partitions are fully replicated and Strimzi is neither rebalancing nor refusing an earlier
// scale-down.
func (r *recommender) brokerGate(from, to int32) (string, string) {
	if to > from {
		if n := r.pol.Safety.Leaving; n > 0 {
			return "BrokersLeaving", fmt.Sprintf("brokers %d -> %d held back: Strimzi is removing %d broker(s) and "+
				"carries the removal to its end (%s); brokers are added once it has", from, to, n, r.pol.Safety.LeavingWhy)
		}
		return "", ""
	}
	urp, ok := r.value(UnderReplicatedPartitions)
	switch {
	case !ok:
		return "UnderReplicatedPartitionsUnknown", fmt.Sprintf("brokers %d -> %d held back: no fresh %s sample, "+
			"so it is not known that every partition is fully replicated", from, to, UnderReplicatedPartitions)
	case urp > 0:
		return "UnderReplicatedPartitions", fmt.Sprintf("brokers %d -> %d held back: %.0f partitions are under-replicated", from, to, urp)
	case r.pol.Safety.Reason != "":
		return r.pol.Safety.Reason, fmt.Sprintf("brokers %d -> %d held back: %s", from, to, r.pol.Safety.Message)
	}
	return "", ""
}

// dataNodeReading: data nodes needed to index the demand within the target and, at full
// capacity, the demand plus the lag's drain within the catch-up time (demand.go): every record
// that reaches Kafka must be indexed, and the rate the data nodes index is capped by the job
// before them (or by their own limit), so it is no measure of the demand while a lag builds up.
// Without the ingest, the indexing rate is all there is.
func (r *recommender) dataNodeReading(cur State, d demand) (reading, bool) {
	x, ok := r.value(ElasticsearchIndexingRate)
	if !ok || r.pol.PerDataNode <= 0 {
		return reading{}, false
	}
	t := r.pol.TargetUtilizationPercent
	// elasticsearch_indices_indexing_index_total counts the operations of every shard copy,
	// primaries and replicas (elasticsearch_exporter, collector/nodes.go, exports each node's
	// nodes-stats indices.indexing.index_total, which counts the operations on every shard copy
	// the node holds, and the query sums the nodes). In records,
	// both the rate and a node's capacity are divided by the copies, so that they compare with
	// the ingest: undivided, a replicated index always looks like it is catching up.
	copies := float64(max(r.pol.IndexCopies, 1))
	x /= copies
	per := float64(r.pol.PerDataNode) / copies
	rd := reading{
		up:         countFor(x, per*float64(t)/100),
		down:       countFor(x, per*float64(t-margin(t))/100),
		upReason:   "IndexingSaturated",
		downReason: "IndexingUnderused",
	}
	rd.what = fmt.Sprintf("Elasticsearch indexes %.0f records/s × %.0f copies", x, copies)
	if d.known {
		rd.up = d.units(per, t)
		if r.steppedAlready(v1alpha1.ResourceElasticsearchDataNodes, d) {
			rd.up = min(rd.up, cur.DataNodes)
		}
		rd.what = d.describe() + "; " + rd.what
		if d.lag <= d.ingest*r.pol.Interval.Seconds() {
			rd.down = countFor(math.Max(x, d.rate), per*float64(t-margin(t))/100)
		} else {
			rd.down = max(rd.up, cur.DataNodes) // not while a lag drains
		}
	}
	if r.held {
		rd.down = max(rd.up, cur.DataNodes)
	}
	rd.what += fmt.Sprintf("; %d%% of %.0f records/s each takes %d data nodes", t, per, rd.up)
	return rd, true
}
