package plan

import (
	"github.com/strata-dev/strata/api/v1alpha1"
)

// Compute plans a pipeline on the given tiers (the cluster's StorageTiers, or at least those the
// pipeline names). It applies the API's defaults itself (see Defaults) and never modifies its
// arguments.
//
// It returns a *FieldError when the input is invalid (something admission would reject, or a
// memory split that leaves no room for the minimum heap) and a *MissingTierError when a named
// tier is absent. A workload the spec's bounds cannot carry is not an error: the plan then uses
// the largest counts allowed, names the bottleneck and says why in Plan.Unsatisfied, so that an
// over-committed configuration can still be applied and observed.
func Compute(p *v1alpha1.AnalyticsPipeline, tiers []v1alpha1.StorageTier) (v1alpha1.Plan, error) {
	if p == nil {
		return v1alpha1.Plan{}, fieldErr("spec", "no AnalyticsPipeline given")
	}
	p = Defaults(p)
	s := &p.Spec
	if err := validate(s); err != nil {
		return v1alpha1.Plan{}, err
	}
	ts, err := resolveTiers(s, tiers)
	if err != nil {
		return v1alpha1.Plan{}, err
	}
	mem, err := splitMemory(s.Spark.Memory)
	if err != nil {
		return v1alpha1.Plan{}, err
	}

	var why reasons
	w := newWorkload(s)
	link := newLinkRates(s.Network)
	logTier := ts[s.Kafka.Storage.Tier]

	// Reasons are added in data-flow order, the order the stages are listed in.
	send := producerSend(w, link, s.Workload.Producers, &why)
	brokers := planBrokers(w, link, s.Kafka, logTier, &why)
	executors := planExecutors(w, link, s.Spark, &why)
	dataNodes := planDataNodes(w, s.Elasticsearch, &why)
	cores := s.Spark.Executors.Cores

	ss := stages(stageInputs{
		w:           w,
		link:        link,
		traffic:     newBrokerTraffic(w, s.Kafka.ReplicationFactor),
		logWrite:    ratOf(logTier.Spec.WriteBytesPerSecond),
		producers:   s.Workload.Producers,
		brokers:     brokers.count,
		executors:   executors.count,
		dataNodes:   dataNodes,
		perExecutor: s.Spark.MessagesPerSecondPerExecutor,
		perDataNode: s.Elasticsearch.MessagesPerSecondPerNode,
	})
	slowest, neck := bottleneck(ss, w.messagesPerSecond, w.target)
	storage := planStorage(placements(s, brokers.count, executors.count, dataNodes), ts)

	return v1alpha1.Plan{
		Brokers:                       brokers.count,
		ReplicationFactor:             s.Kafka.ReplicationFactor,
		MinInSyncReplicas:             minInSyncReplicas(s.Kafka.ReplicationFactor),
		Partitions:                    partitions(s.Kafka, executors.count, cores),
		Executors:                     executors.count,
		ExecutorCores:                 cores,
		ElasticsearchDataNodes:        dataNodes,
		Shards:                        shards(s.Elasticsearch, dataNodes),
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
		Storage:                       storage.rows,
		MonthlyStorageCost:            storage.total.String(),
		SingleTierMonthlyStorageCost:  storage.singleTier.String(),
	}, nil
}
