package plan

import (
	"math/big"

	"github.com/strata-dev/strata/api/v1alpha1"
)

// Fresh plans a pipeline nothing of which runs yet, with no autoscaler targets: Compute with
// a zero Observed. It is what `strata plan`, the lab and the tests plan a spec with.
func Fresh(p *v1alpha1.AnalyticsPipeline, tiers []v1alpha1.StorageTier) (v1alpha1.Plan, error) {
	r, err := Compute(p, tiers, Observed{})
	return r.Plan, err
}

// Compute plans a pipeline on the given tiers (the cluster's StorageTiers, or at least those the
// pipeline names) for what runs and what the autoscaler decided (obs, observed.go): the plan to
// apply now, the notes PlanValid gives about it and the broker to empty, if any. It is the one
// place the applied counts are decided. It applies the API's defaults itself (see Defaults) and
// never modifies its arguments.
//
// It returns a *FieldError when the input is invalid (something admission would reject, or a
// memory split that leaves no room for the minimum heap) and a *MissingTierError when a named
// tier is absent. A workload the spec's bounds cannot carry is not an error: the plan then uses
// the largest counts allowed, names the bottleneck and says why in Plan.Unsatisfied, so that an
// over-committed configuration can still be applied and observed.
func Compute(p *v1alpha1.AnalyticsPipeline, tiers []v1alpha1.StorageTier, obs Observed) (Result, error) {
	if p == nil {
		return Result{}, fieldErr("spec", "no AnalyticsPipeline given")
	}
	if err := checkName(p.Name); err != nil {
		return Result{}, err
	}
	p = Defaults(targeted(p, obs.Autoscaling))
	s := &p.Spec
	if err := validate(s); err != nil {
		return Result{}, err
	}
	ts, err := resolveTiers(s, tiers)
	if err != nil {
		return Result{}, err
	}
	mem, err := splitMemory(s.Spark.Memory)
	if err != nil {
		return Result{}, err
	}

	var why reasons
	var notes Notes // PlanValid's: what is applied now rather than what the spec alone gets
	w := newWorkload(s)
	link := newLinkRates(s.Network)
	logTier := ts[s.Kafka.Storage.Tier]

	// Reasons are added in data-flow order, the order the stages are listed in.
	brokerPod := brokerResources(s.Kafka, link)
	dataPod := dataNodeResources(s.Elasticsearch, w.messageBytes)
	perNode := perDataNode(dataPod, s.Elasticsearch, w.messageBytes)
	send := producerSend(w, link, s.Workload.Producers, &why)
	// The brokers' shares depend on the partition count, which follows the executors: they are
	// planned first and their reasons added after the brokers'. Automatic partitions are then
	// rounded up to a multiple of the broker count, which is planned from them (sizing.go).
	var executorWhy reasons
	disks := newShuffleDisks(s.Spark.Shuffle, ts, w)
	executors := planExecutors(w, link, s.Spark, disks, &executorWhy)
	cores := s.Spark.Executors.Cores
	partsFor := func(k v1alpha1.KafkaSpec, existing int32, why *reasons) (int32, brokerPlan) {
		return partitionsAndBrokers(k, executors.count, cores, existing, func(p int32, why *reasons) brokerPlan {
			return planBrokers(w, link, k, p, logTier, brokerCPUBytes(brokerPod), why)
		}, why)
	}
	parts, brokers, targetBrokers, emptyBrokers := kafkaCounts(s.Kafka, obs, partsFor, &why, &notes)
	if targetBrokers == brokers.count {
		targetBrokers = 0 // no step: brokers is the target
	}
	why = append(why, executorWhy...)
	dataNodes := planDataNodes(w, s.Elasticsearch, perNode, &why)

	// The executors' claims grow where size buys the bandwidth their writes need (shuffledisk.go),
	// before anything sizes or prices them.
	ps := placements(s, brokers.count, executors.count, dataNodes)
	shuffleWrite := disks.size(ps, executors.receive, executorWriteAtCapacity(w, link, s.Spark.MessagesPerSecondPerExecutor), w.target)

	ss := stages(stageInputs{
		w:            w,
		link:         link,
		traffic:      newBrokerTraffic(w, s.Kafka.ReplicationFactor, parts),
		logWrite:     brokers.diskWriteLimit,
		producers:    s.Workload.Producers,
		brokers:      brokers.count,
		executors:    executors.count,
		dataNodes:    dataNodes,
		perExecutor:  s.Spark.MessagesPerSecondPerExecutor,
		shuffleWrite: shuffleWrite,
		perDataNode:  perNode,
		brokerCPU:    brokerCPUBytes(brokerPod),
		indexCopies:  IndexCopies(s.Elasticsearch),
	})
	slowest, neck := bottleneck(ss, w.messagesPerSecond, w.target)
	// Storage problems are kept apart from throughput ones: the bottleneck names a stage.
	var storeWhy reasons
	quorum := KRaftQuorum(brokers.count)
	if obs.KafkaControllers > 0 {
		quorum = obs.KafkaControllers
	}
	notes.Quorum = quorumNote(obs.KafkaControllers, brokers.count)
	meta, metaPlaced := metadataVolumes(s, ts, quorum)
	if err := checkLocalClaims(append(ps[:len(ps):len(ps)], metaPlaced...), ts); err != nil {
		return Result{}, err
	}
	nShards := shards(s.Elasticsearch, dataNodes)
	ret := planRetention(s, w, ts, ps, retentionInputs{partitions: parts, shards: nShards,
		brokers: brokers.count, dataNodes: dataNodes, brokerWrite: brokers.diskWrite, executorWrite: executors.receive}, &storeWhy)
	local := localVolumes(append(ps[:len(ps):len(ps)], metaPlaced...), ts, &storeWhy)
	storage := planStorage(ps, ts)

	return Result{Notes: notes, EmptyBrokers: emptyBrokers, Plan: v1alpha1.Plan{
		Brokers:                       brokers.count,
		TargetBrokers:                 targetBrokers,
		ReplicationFactor:             s.Kafka.ReplicationFactor,
		MinInSyncReplicas:             minInSyncReplicas(s.Kafka),
		Partitions:                    parts,
		Executors:                     executors.count,
		ExecutorCores:                 cores,
		ElasticsearchDataNodes:        dataNodes,
		Shards:                        nShards,
		IngestBytesPerSecond:          floor64(w.ingest),
		LinkUsableBytesPerSecond:      floor64(link.usable),
		LinkPlannedBytesPerSecond:     floor64(link.planned),
		BrokerReceiveBytesPerSecond:   floor64(brokers.receive),
		BrokerSendBytesPerSecond:      floor64(brokers.send),
		BrokerDiskWriteBytesPerSecond: floor64(brokers.diskWrite),
		ProducerSendBytesPerSecond:    floor64(send),
		ExecutorReceiveBytesPerSecond: floor64(executors.receive),
		Stages:                        stageCapacities(ss),
		MaxMessagesPerSecond:          floor64(ss[slowest].capacity),
		Bottleneck:                    neck,
		Unsatisfied:                   why.String(),
		ExecutorMemory:                executorMemory(mem, s.Spark.Memory, cores),
		Resources:                     resourcesPlan(s, brokerPod, dataPod),
		Storage:                       storage.rows,
		MetadataVolumes:               meta,
		LocalVolumes:                  local,
		StorageUnsatisfied:            storeWhy.String(),
		Retention:                     ret,
		MonthlyStorageCost:            storage.total.String(),
		SingleTierMonthlyStorageCost:  storage.singleTier.String(),
	}}, nil
}

// Stage capacities and the bottleneck.
//
// Every stage of the pipeline gets a capacity: the ingest rate, in records per second, it could
// carry at 100 % of its usable resources (for links, the usable link rate) with the counts the
// plan chose. Capacities are what users compare with what they measure, so they are stated at
// 100 %; the target utilization only decides whether a stage has enough headroom.
//
// The decisions use the exact rational capacities, which is what makes them agree with the
// count choices: a stage is under target exactly when the count chosen for it fell short of its
// requirement (and Plan.Unsatisfied says why). The reported figures are floored.

// stage is one stage's exact capacity in records per second of ingest.
type stage struct {
	name     string
	capacity *big.Rat
}

// stageInputs is what the capacities depend on: the chosen counts and the rates behind them.
type stageInputs struct {
	w        workload
	link     linkRates
	traffic  brokerTraffic
	logWrite *big.Rat
	// shuffleWrite is the write bandwidth of the executor's slowest shuffle volume, per role
	// it holds: each role takes the executor's input rate.
	shuffleWrite                             *big.Rat
	producers, brokers, executors, dataNodes int32
	perExecutor, perDataNode                 int64
	// indexCopies is 1 + spec.elasticsearch.replicas: every copy of a record is indexed.
	indexCopies int32
	// brokerCPU is what one broker's CPU moves, received plus sent, in bytes per second.
	brokerCPU *big.Rat
}

// stages returns the capacities in the order data flows through the pipeline; on a tie the
// upstream stage is named the bottleneck, since relieving it is what lets data reach the next.
func stages(in stageInputs) []stage {
	w, link := in.w, in.link
	bytes := ratInt(w.messageBytes)
	mps := ratInt(w.messagesPerSecond)
	n := func(c int32) *big.Rat { return ratInt(int64(c)) }
	b := int64(in.brokers)
	return []stage{
		// Each producer node sends its share of the ingest over its own link.
		{v1alpha1.StageProducerNetwork, quo(mul(n(in.producers), link.usable), bytes)},
		// The busiest broker's busier link direction moves busiest(B)/mps bytes per ingested
		// record, and what it moves in and out must stay within its CPU.
		{v1alpha1.StageKafkaBrokerNetwork, minRat(quo(mul(link.usable, mps), in.traffic.busiest(b)),
			quo(mul(in.brokerCPU, mps), in.traffic.total(b)))},
		// The busiest broker writes what it receives: its ⌈P·R/B⌉ replicas.
		{v1alpha1.StageKafkaDisk, quo(mul(in.logWrite, mps), in.traffic.receive(b))},
		// Executors read at the consumer rate, which is C/I times the ingest.
		{v1alpha1.StageSparkNetwork, quo(mul(link.usable, n(in.executors), mps), w.consume)},
		{v1alpha1.StageSparkProcessing, ratInt(int64(in.executors) * in.perExecutor)},
		// Executors write what they read to each shuffle volume: C/(E·I) bytes per record.
		{v1alpha1.StageSparkShuffleDisk, quo(mul(in.shuffleWrite, n(in.executors), mps), w.consume)},
		// Each record is indexed once per copy (the primary and every replica), and the
		// copies share the data nodes' indexing capacity.
		{v1alpha1.StageElasticsearchIndexing, quo(ratInt(int64(in.dataNodes)*in.perDataNode), n(max(in.indexCopies, 1)))},
	}
}

// underTarget reports whether a stage cannot carry the workload within the target utilization.
func underTarget(s stage, messagesPerSecond int64, target int32) bool {
	// capacity·target/100 < mps, cross-multiplied to stay in integers.
	lhs := new(big.Int).Mul(s.capacity.Num(), big.NewInt(int64(target)))
	rhs := new(big.Int).Mul(s.capacity.Denom(), big.NewInt(messagesPerSecond*100))
	return lhs.Cmp(rhs) < 0
}

// bottleneck returns the slowest stage's index and the bottleneck's name: None when every stage
// carries the workload within the target utilization, else the slowest stage. (If any stage is
// under target, so is the slowest, so the slowest is always the one to relieve first.)
func bottleneck(ss []stage, messagesPerSecond int64, target int32) (slowest int, name string) {
	for i := range ss {
		if ss[i].capacity.Cmp(ss[slowest].capacity) < 0 {
			slowest = i
		}
	}
	for _, s := range ss {
		if underTarget(s, messagesPerSecond, target) {
			return slowest, ss[slowest].name
		}
	}
	return slowest, v1alpha1.BottleneckNone
}

func stageCapacities(ss []stage) []v1alpha1.StageCapacity {
	out := make([]v1alpha1.StageCapacity, len(ss))
	for i, s := range ss {
		out[i] = v1alpha1.StageCapacity{Name: s.name, MaxMessagesPerSecond: floor64(s.capacity)}
	}
	return out
}

func minRat(a, b *big.Rat) *big.Rat {
	if b.Cmp(a) < 0 {
		return b
	}
	return a
}
