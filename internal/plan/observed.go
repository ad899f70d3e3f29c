package plan

import (
	"fmt"
	"slices"
	"strings"

	"github.com/strata-dev/strata/api/v1alpha1"
)

// What already runs, and what the autoscaler decided, bound the plan to apply. Compute reads
// them from an Observed, which the controller fills in from the cluster (controllers/
// kafka_scaling.go, observedCluster) and the simulator from its model, so that the plan
// applied is decided in one place, by one pure function:
//   - the autoscaler's targets raise the counts' floors, and its measured per-executor rate
//     and memory split replace the spec's;
//   - the KRaft quorum stays the one the cluster was created with (Strimzi runs only static
//     quorums);
//   - the topic keeps its partitions (Kafka cannot remove them);
//   - brokers leave one at a time, each only when Strimzi may remove one, and the last broker
//     but one only once a remove-brokers KafkaRebalance has emptied it.

// Observed is what runs and what the autoscaler decided; its zero value is a new pipeline with
// nothing running and no autoscaler targets.
type Observed struct {
	// KafkaControllers is the KRaft quorum the Kafka cluster was created with (0: none yet).
	// Strimzi runs only static quorums: a controller pool is never scaled (strimzi-kafka-operator
	// 1.2.0, documentation/assemblies/deploying/assembly-kraft-mode.adoc, "Limitations with
	// static controller quorums"), so the quorum chosen at creation stays whatever the brokers
	// become.
	KafkaControllers int32
	// Partitions is the partition count the topic has (0: no topic yet). Kafka cannot remove
	// partitions, so the plan never has fewer, and every figure per partition is planned for
	// the ones that exist: the brokers' shares and, above all, retention.bytes, which Kafka
	// applies to each partition. Planned for the fewer a smaller spec or executor count would
	// choose, the brokers would keep that many times more than their volumes hold (a topic
	// grown to 60 partitions by executors scaled up, planned again for 20, three times).
	Partitions int32
	// Brokers is the broker pool as Strimzi runs it.
	Brokers BrokerPool
	// Autoscaling is the autoscaler's decision (status.autoscaling); nil, or autoscaling off in
	// the spec: the spec is planned as it is.
	Autoscaling *v1alpha1.AutoscalingStatus
}

// BrokerPool is the broker KafkaNodePool as the cluster has it.
type BrokerPool struct {
	// Replicas is the pool's spec.replicas, what the operator applied last (0: no pool yet).
	Replicas int32
	// NodeIDs are the brokers Strimzi runs for the pool (status.nodeIds; none before Strimzi
	// reports them).
	NodeIDs []int32
	// Safety says whether brokers may leave now (autoscale.StrimziSafety reads it from Strimzi).
	Safety BrokerSafety
	// Removal names the KafkaRebalance that empties the last broker but one
	// (desired.BrokerRemovalName), for PlanValid; Emptied are the brokers it lists, when Strimzi
	// reports it Ready: its moves are done. None while it runs or is absent.
	Removal string
	Emptied []int32
	// RemovalState is what Strimzi reports of that KafkaRebalance while it is not Ready (its
	// state, and why when it ended without moving the replicas), for PlanValid.
	RemovalState string
	// RemovalRunning says that KafkaRebalance is under way: Cruise Control moves the broker's
	// replicas off, and Strimzi does not stop it if it is deleted, so it is carried to its end.
	RemovalRunning bool
	// Leaving is how many brokers Strimzi is removing now (autoscale.BrokerSafety.Leaving). It
	// carries such a removal to its end whatever the pool asks for, and only brokers added are
	// filled after, so the pool grows once the removal is done.
	Leaving int32
}

// BrokerSafety is whether brokers may leave the cluster now: Reason is empty when they may;
// otherwise it names what holds a scale-down back and Message says it with Strimzi's words.
// (autoscale.BrokerSafety carries the same verdict with what the autoscaler reads besides.)
type BrokerSafety struct {
	Reason, Message string
}

// Result is the plan to apply and what PlanValid says about it.
type Result struct {
	Plan  v1alpha1.Plan
	Notes Notes
	// EmptyBrokers are the brokers a remove-brokers KafkaRebalance must empty before the pool
	// may go from two brokers to one (desired.Inputs.EmptyBrokers).
	EmptyBrokers []int32
}

// Notes say where the plan applied differs from what the spec alone would get; empty when it
// does not.
type Notes struct {
	// Brokers: the pool steps down towards the plan's brokers, or waits.
	Brokers string
	// Quorum: the KRaft quorum is the running one, not the one a new cluster would get.
	Quorum string
	// Partitions: the topic keeps more partitions than a new one would get.
	Partitions string
}

// List returns the notes that are set, in the order PlanValid gives them.
func (n Notes) List() []string {
	var out []string
	for _, s := range []string{n.Brokers, n.Quorum, n.Partitions} {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

// String joins the notes as PlanValid's message does.
func (n Notes) String() string { return strings.Join(n.List(), "; ") }

// Measured returns a copy of p with the autoscaler's measured rate and memory split but the
// spec's counts: its plan is the floor the autoscaler scales from — what the declared workload
// needs. A nil status leaves the copy as p is.
func Measured(p *v1alpha1.AnalyticsPipeline, st *v1alpha1.AutoscalingStatus) *v1alpha1.AnalyticsPipeline {
	out := p.DeepCopy()
	if st == nil {
		return out
	}
	s := &out.Spec
	if c := st.MessagesPerSecondPerExecutor; c > 0 {
		s.Spark.MessagesPerSecondPerExecutor = c
	}
	if st.PageCachePercent != nil || st.OffHeapPercent != nil {
		m := *s.Spark.Memory.DeepCopy()
		if st.PageCachePercent != nil {
			m.PageCachePercent = *st.PageCachePercent
		}
		if st.OffHeapPercent != nil {
			m.OffHeapPercent = *st.OffHeapPercent
		}
		// A split decided for an earlier budget may not fit a new one: the spec's then holds.
		if CheckMemory(m) == nil {
			s.Spark.Memory = m
		}
	}
	return out
}

// targeted returns the pipeline the counts are chosen for: with autoscaling on and a decision
// made, Measured's copy with each count's floor raised to the autoscaler's target (within the
// spec's maximum), so that the plan's count is the larger of what the declared workload and
// the measured load need. Otherwise p itself, which Compute does not change.
func targeted(p *v1alpha1.AnalyticsPipeline, st *v1alpha1.AutoscalingStatus) *v1alpha1.AnalyticsPipeline {
	if st == nil || p.Spec.Autoscaling == nil || !p.Spec.Autoscaling.Enabled {
		return p
	}
	out := Measured(p, st)
	s := &out.Spec
	raise := func(lo *int32, hi, target int32) {
		if target > *lo {
			*lo = min(target, hi)
		}
	}
	raise(&s.Kafka.Brokers.Min, s.Kafka.Brokers.Max, st.Brokers)
	raise(&s.Spark.Executors.Min, s.Spark.Executors.Max, st.Executors)
	raise(&s.Elasticsearch.DataNodes.Min, s.Elasticsearch.DataNodes.Max, st.ElasticsearchDataNodes)
	return out
}

// partitionsFor plans the topic's partitions, at least existing, and the brokers planned from
// them, for the Kafka spec k (partitionsAndBrokers, with the executors already planned).
type partitionsFor func(k v1alpha1.KafkaSpec, existing int32, why *reasons) (int32, brokerPlan)

// kafkaCounts plans the topic's partitions and the brokers to apply now: the spec's plan for
// the partitions the topic has, or a step towards it (brokerStep), adding the reasons of the
// brokers applied to why and the brokers and partitions notes to notes. It returns the broker
// count the steps head for (the plan's brokers when no step is taken) and the broker to empty
// first, if any.
func kafkaCounts(k v1alpha1.KafkaSpec, obs Observed, plan partitionsFor, why *reasons, notes *Notes) (int32, brokerPlan, int32, []int32) {
	var brokerWhy reasons
	parts, brokers := plan(k, obs.Partitions, &brokerWhy)
	target := brokers.count
	step, stepNote, empty := brokerStep(obs.Brokers, brokers.count)
	if step != brokers.count {
		// A step of a scale-down: every figure (traffic per broker, volumes, stages) is for the
		// brokers that run during it, planned as if the spec asked for exactly that many.
		stepped := k
		stepped.Brokers.Min, stepped.Brokers.Max = step, max(k.Brokers.Max, step)
		brokerWhy = nil
		parts, brokers = plan(stepped, obs.Partitions, &brokerWhy)
	}
	// Said also when the step is the plan's count: a removal carried to its end.
	notes.Brokers = stepNote
	if obs.Partitions > 0 && parts == obs.Partitions {
		// What a new topic would get, to say so when the topic has more.
		fresh, _ := plan(k, 0, new(reasons))
		notes.Partitions = partitionsNote(obs.Partitions, parts, fresh)
	}
	*why = append(*why, brokerWhy...)
	return parts, brokers, target, empty
}

// brokerStep is the broker count to apply now when the pool runs pool.Replicas brokers and the
// plan wants planned, with the note for PlanValid (empty when it is the plan's) and the broker
// to empty first, if any.
//
// Growth is applied at once: Strimzi adds brokers and rebalances onto them. A drop goes one
// broker fewer than the pool at a time, and only when Strimzi may remove one: each broker's
// partitions are moved off by Strimzi's remove-brokers rebalance, and several brokers dropped
// at once could take every replica of a partition with them. A spec edit lowering the brokers
// takes this path like the autoscaler's own scale-downs.
//
// From two brokers to one, the leaving broker is emptied first by a remove-brokers
// KafkaRebalance (desired.BrokerRemoval): Strimzi refuses Cruise Control with one broker in the
// pools, so its auto-rebalance cannot empty that broker as it does every other. Strimzi removes
// the highest node ID of a pool when it scales down without a strimzi.io/remove-node-ids
// annotation (strimzi-kafka-operator 1.2.0, documentation/modules/configuring/
// con-config-node-pools.adoc, "Node ID assignment"), so that is the one emptied.
func brokerStep(pool BrokerPool, planned int32) (step int32, note string, empty []int32) {
	live := pool.Replicas
	switch {
	case live == 2 && pool.RemovalRunning:
		// The last broker but one is being emptied: carried to its end (below), whatever the
		// plan wants now, and the pool grows again after.
		return lastButOne(pool, planned)
	case live == 2 && planned > 1 && emptiedLast(pool):
		// It is empty, and brokers are wanted back: it leaves first, when Strimzi may remove
		// one; meanwhile the removal is kept, which keeps it known as empty.
		if pool.Safety.Reason != "" {
			id := slices.Max(pool.NodeIDs)
			return 2, fmt.Sprintf("brokers stay at 2 (%d planned): broker %d is empty and leaves once Strimzi may remove "+
				"one: %s: %s; the brokers are added after", planned, id, pool.Safety.Reason, pool.Safety.Message), []int32{id}
		}
		return lastButOne(pool, planned)
	case planned > live && pool.Leaving > 0:
		return live, fmt.Sprintf("brokers stay at %d (%d planned) while Strimzi removes %d broker(s): it carries a "+
			"removal to its end, and a broker asked back now would stay without its partitions; they are added once it "+
			"has", live, planned, pool.Leaving), nil
	case planned >= live:
		return planned, "", nil
	case pool.Safety.Reason != "":
		return live, fmt.Sprintf("brokers stay at %d (%d planned) until Strimzi may remove one: %s: %s",
			live, planned, pool.Safety.Reason, pool.Safety.Message), nil
	}
	if live == 2 {
		return lastButOne(pool, planned)
	}
	step = live - 1
	return step, fmt.Sprintf("brokers step down one at a time: %d now, %d planned", step, planned), nil
}

// emptiedLast says whether the removal KafkaRebalance has emptied the pool's highest node ID,
// the broker that leaves when the pool goes from two to one.
func emptiedLast(pool BrokerPool) bool {
	return len(pool.NodeIDs) > 0 && slices.Equal(pool.Emptied, []int32{slices.Max(pool.NodeIDs)})
}

// lastButOne is brokerStep from two brokers to one: the pool keeps two while the removal
// KafkaRebalance empties the highest node ID, and goes to one once it has; planned is 1, or more
// when the plan wanted brokers back while the removal ran (it is carried to its end first).
func lastButOne(pool BrokerPool, planned int32) (step int32, note string, empty []int32) {
	if len(pool.NodeIDs) == 0 {
		return 2, fmt.Sprintf("brokers stay at 2 (%d planned) while Strimzi has not reported the broker pool's node IDs, "+
			"which name the broker to empty", planned), nil
	}
	id := slices.Max(pool.NodeIDs)
	if emptiedLast(pool) {
		if planned > 1 {
			return 1, fmt.Sprintf("brokers go to 1 (%d planned): broker %d is empty, and the brokers are added once "+
				"the pool has let it go", planned, id), nil
		}
		return 1, "", nil
	}
	note = fmt.Sprintf("brokers stay at 2 (%d planned) while KafkaRebalance %s moves broker %d's partitions off "+
		"(Strimzi refuses Cruise Control with one broker, so the pool goes to one only once that broker is empty)",
		planned, pool.Removal, id)
	if pool.RemovalState != "" {
		note += "; Strimzi reports it " + pool.RemovalState
	}
	if strings.HasPrefix(pool.RemovalState, "NotReady") || strings.HasPrefix(pool.RemovalState, "Stopped") {
		// Strimzi leaves a KafkaRebalance that ended so as it is until it is asked again
		// (strimzi-kafka-operator 1.2.0, KafkaRebalanceAssemblyOperator: onStop acts only on the
		// strimzi.io/rebalance=refresh annotation, onNotReady on it or on Cruise Control coming
		// up: shouldRenewRebalance); the controller asks (desired.BrokerRemoval, RefreshRemoval).
		note += "; the operator asks Strimzi to try it again (strimzi.io/rebalance=refresh) a minute after it ended"
	}
	if planned > 1 {
		// KafkaRebalanceAssemblyOperator.reconcileKafkaRebalance (1.2.0) only logs a deletion:
		// Cruise Control is stopped for the stop and refresh annotations alone.
		note += "; Strimzi does not stop a KafkaRebalance that is deleted, so it is carried to its end and " +
			"the brokers are added after"
	}
	return 2, note, []int32{id}
}

// quorumNote says when the plan's brokers would have chosen another quorum for a new cluster.
func quorumNote(running, brokers int32) string {
	if running == 0 || running == KRaftQuorum(brokers) {
		return ""
	}
	return fmt.Sprintf("the KRaft quorum keeps the %d controller(s) the cluster was created with, although a new "+
		"cluster of %d broker(s) would get %d: Strimzi runs only static quorums (re-create the Kafka cluster to change it)",
		running, brokers, KRaftQuorum(brokers))
}

// partitionsNote says when the topic keeps more partitions than a new topic would get (fresh).
func partitionsNote(existing, planned, fresh int32) string {
	if existing == 0 || planned != existing || fresh >= planned {
		return ""
	}
	return fmt.Sprintf("the topic keeps its %d partitions although the plan would choose %d: Kafka cannot remove partitions",
		planned, fresh)
}
