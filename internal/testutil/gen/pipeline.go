package gen

import (
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/strata-dev/strata/api/v1alpha1"
)

// PipelineOption changes one thing of a pipeline.
type PipelineOption func(*v1alpha1.AnalyticsPipeline)

// Pipeline is docs/api.md's example pipeline ("sensors" in "default": 10,000 records/s of 9,028
// bytes over 1 Gbit/s links; Kafka, spill and Elasticsearch on nvme-local, the final shuffle data
// on hdd-st1) without autoscaling, running the example's job of the user's own
// (registry.example/sensor-job:1.0) rather than Strata's, changed by opts in order. It has one
// producer where the example has two: one producer sends 90.28 MB/s, over the 90 MB/s planned
// per link, so its plan's bottleneck is ProducerNetwork, which the plan tests build on;
// SetProducers(2) gives the example's (bottleneck None, as docs/api.md shows).
func Pipeline(opts ...PipelineOption) *v1alpha1.AnalyticsPipeline {
	p := &v1alpha1.AnalyticsPipeline{
		ObjectMeta: metav1.ObjectMeta{Name: "sensors", Namespace: "default"},
		Spec: v1alpha1.AnalyticsPipelineSpec{
			Workload: v1alpha1.WorkloadSpec{MessagesPerSecond: 10000, MessageBytes: 9028, Producers: 1},
			Network:  v1alpha1.NetworkSpec{LinkBitsPerSecond: Q("1G"), EfficiencyPercent: 90, TargetUtilizationPercent: 80},
			Kafka: v1alpha1.KafkaSpec{
				Version:           "4.2.0",
				ReplicationFactor: 2,
				Brokers:           v1alpha1.Range{Min: 2, Max: 6},
				Storage:           v1alpha1.StorageRef{Tier: "nvme-local", Size: Q("200Gi")},
				RackTopologyKey:   "kubernetes.io/hostname",
				Topic:             v1alpha1.TopicSpec{Name: "sensors"},
			},
			Spark: v1alpha1.SparkSpec{
				Image:                        "registry.example/sensor-job:1.0",
				MainApplicationFile:          "local:///opt/app/job.jar",
				MainClass:                    "example.SensorJob",
				SparkVersion:                 "4.0.2",
				Executors:                    v1alpha1.ExecutorsSpec{Min: 2, Max: 10, Cores: 5},
				MessagesPerSecondPerExecutor: 4000,
				Memory: v1alpha1.MemorySpec{Budget: Q("16Gi"), OffHeapPercent: 50, PageCachePercent: 25,
					MinHeap: ptr.To(Q("2Gi"))},
				Shuffle: v1alpha1.ShuffleSpec{SpillTier: "nvme-local", SpillSize: Q("20Gi"),
					DataTier: "hdd-st1", DataSize: ptr.To(Q("40Gi"))},
			},
			Elasticsearch: v1alpha1.ElasticsearchSpec{
				Version:                  "8.19.0",
				DataNodes:                v1alpha1.Range{Min: 2, Max: 6},
				MessagesPerSecondPerNode: 8000,
				Storage:                  v1alpha1.StorageRef{Tier: "nvme-local", Size: Q("400Gi")},
			},
		},
	}
	for _, o := range opts {
		o(p)
	}
	return p
}

// Q is resource.MustParse, short for fixtures full of quantities.
func Q(s string) resource.Quantity { return resource.MustParse(s) }

// SetName places the pipeline.
func SetName(namespace, name string) PipelineOption {
	return func(p *v1alpha1.AnalyticsPipeline) { p.Namespace, p.Name = namespace, name }
}

// SetUID gives the pipeline the UID its children's owner references carry.
func SetUID(uid string) PipelineOption {
	return func(p *v1alpha1.AnalyticsPipeline) { p.UID = types.UID(uid) }
}

// SetWorkload sets the ingest: records per second and their size.
func SetWorkload(messagesPerSecond, messageBytes int64) PipelineOption {
	return func(p *v1alpha1.AnalyticsPipeline) {
		p.Spec.Workload.MessagesPerSecond, p.Spec.Workload.MessageBytes = messagesPerSecond, messageBytes
	}
}

// SetProducers sets how many producer nodes share the ingest.
func SetProducers(n int32) PipelineOption {
	return func(p *v1alpha1.AnalyticsPipeline) { p.Spec.Workload.Producers = n }
}

// SetBrokers sets the broker range.
func SetBrokers(min, max int32) PipelineOption {
	return func(p *v1alpha1.AnalyticsPipeline) { p.Spec.Kafka.Brokers = v1alpha1.Range{Min: min, Max: max} }
}

// SetExecutors sets the executor range and cores.
func SetExecutors(min, max, cores int32) PipelineOption {
	return func(p *v1alpha1.AnalyticsPipeline) {
		p.Spec.Spark.Executors = v1alpha1.ExecutorsSpec{Min: min, Max: max, Cores: cores}
	}
}

// SetDataNodes sets the Elasticsearch data node range.
func SetDataNodes(min, max int32) PipelineOption {
	return func(p *v1alpha1.AnalyticsPipeline) {
		p.Spec.Elasticsearch.DataNodes = v1alpha1.Range{Min: min, Max: max}
	}
}

// SetTopic names the Kafka topic.
func SetTopic(name string) PipelineOption {
	return func(p *v1alpha1.AnalyticsPipeline) { p.Spec.Kafka.Topic.Name = name }
}

// SetElasticsearchSize sets the claim of each data node.
func SetElasticsearchSize(size string) PipelineOption {
	return func(p *v1alpha1.AnalyticsPipeline) { p.Spec.Elasticsearch.Storage.Size = Q(size) }
}

// SetAutoscaling turns autoscaling on with the given spec.
func SetAutoscaling(a v1alpha1.AutoscalingSpec) PipelineOption {
	return func(p *v1alpha1.AnalyticsPipeline) { p.Spec.Autoscaling = &a }
}

// SetSpec changes the spec by hand, for what no option names.
func SetSpec(change func(*v1alpha1.AnalyticsPipelineSpec)) PipelineOption {
	return func(p *v1alpha1.AnalyticsPipeline) { change(&p.Spec) }
}

// SetPlan sets status.plan, as the operator would have written it.
func SetPlan(plan v1alpha1.Plan) PipelineOption {
	return func(p *v1alpha1.AnalyticsPipeline) { p.Status.Plan = &plan }
}

// SetConditions sets status.conditions.
func SetConditions(conds ...metav1.Condition) PipelineOption {
	return func(p *v1alpha1.AnalyticsPipeline) { p.Status.Conditions = conds }
}
