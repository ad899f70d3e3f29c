package plan

import (
	"math/big"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/strata-dev/strata/api/v1alpha1"
)

// Pod resources: the CPU and memory of the Kafka and Elasticsearch pods.
//
// Every pod gets a memory request equal to its limit (a JVM and its page cache are sized to the
// limit, and a pod that may be evicted for using what it was planned to use is no plan), a CPU
// request from the load model, and a fixed JVM heap (-Xms = -Xmx) inside the memory; what the
// heap and the JVM's native memory leave is the page cache of the pod's files, which the kernel
// charges to the pod's memory cgroup, so it must be inside the limit too (docs/studies.md
// §1.2: the page cache an executor can use must be inside its pod memory limit; the same holds
// for a broker's log and a data node's index files).
//
// The stage capacities follow from these resources, not from constants beside them: a broker's
// CPU bounds what it moves (KafkaBrokerNetwork) and a data node's CPU what it indexes
// (ElasticsearchIndexing). Planned, the CPU never binds before the link or the spec's
// messagesPerSecondPerNode; set lower by spec.kafka.resources or spec.elasticsearch.resources,
// it does, and the plan says so.

const (
	// kafkaBytesPerCore is what one core of a broker moves, received plus sent, in bytes per
	// second. Strata's planning figure, not a measurement: brokers are planned with enough cores
	// to fill their link both ways, so that the link stays their limit (docs/studies.md §1.1:
	// brokers are limited by their link before their CPU or disk).
	kafkaBytesPerCore = 100_000_000
	// esIndexBytesPerCore is the document bytes one core of a data node indexes per second
	// (each copy counted): Strata's planning figure, which sizes a data node's CPU for
	// spec.elasticsearch.messagesPerSecondPerNode.
	esIndexBytesPerCore = 10_000_000
	// cpuStep is the granularity of planned CPU, in millicores; minMilliCPU and maxMilliCPU
	// bound a planned (not an overridden) CPU. Estimates: half a core keeps requests coarse
	// enough to read, 32 cores is a large node's; spec.*.resources.cpu overrides the CPU.
	cpuStep     = 500
	minMilliCPU = 500
	maxMilliCPU = 32_000

	// brokerHeap is a broker's heap: Kafka keeps records in the page cache, not the heap, and
	// Strimzi caps its own default heap at 5 GB (strimzi-kafka-operator 1.2.0,
	// documentation/modules/con-common-configuration-properties.adoc, "Default heap settings
	// for components": Kafka 50 % of the memory, at most 5 GB).
	brokerHeap = 2 * gib
	// kafkaNative is a Kafka JVM's memory outside the heap (metaspace, threads, network
	// buffers), at most a quarter of its memory. An estimate; not overridable (it follows
	// spec.kafka.resources.memory only through that quarter).
	kafkaNative = 512 * mib
	// brokerCacheSeconds is how many seconds of what a broker can receive at its full usable
	// link its page cache holds: followers and consumers that keep up read from it. An
	// estimate; spec.kafka.resources.memory overrides the memory it sizes.
	brokerCacheSeconds = 60

	// A KRaft controller's pod and heap, and a dedicated Elasticsearch master's pod
	// (masterMilliCPU, masterMemory below): estimates for pods that hold only metadata and the
	// cluster state, not measured; spec.kafka.controllers.resources and
	// spec.elasticsearch.masters.resources override them.
	controllerMilliCPU = 500
	controllerMemory   = 2 * gib
	controllerHeap     = 1 * gib

	// esMemoryPerCore is a data node's memory per planned core, at least esMinMemory. Estimates;
	// spec.elasticsearch.resources.memory overrides the memory.
	esMemoryPerCore = 2 * gib
	esMinMemory     = 4 * gib
	// esMaxHeap: Elasticsearch's heap is at most half the memory (the rest is its off-heap
	// buffers and the filesystem cache) and below the JVM's zero-based compressed-oops
	// threshold, "26 GB is safe on most systems" (Elasticsearch reference, "Setting the heap
	// size").
	esMaxHeap = 26 * gib

	masterMilliCPU = 500
	masterMemory   = 2 * gib
)

// podResources is one role's CPU (millicores) and memory split, in bytes.
type podResources struct {
	role                 string
	milliCPU             int64
	memory, heap, native int64
}

// pageCache is what memory leaves after the heap and the native memory.
func (r podResources) pageCache() int64 { return max(r.memory-r.heap-r.native, 0) }

// ceilCPU rounds millicores up to cpuStep, within [minMilliCPU, maxMilliCPU].
func ceilCPU(m *big.Rat) int64 {
	steps := ceilInt(quo(m, ratInt(cpuStep)))
	if steps.Cmp(big.NewInt(maxMilliCPU/cpuStep)) > 0 {
		return maxMilliCPU
	}
	return max(steps.Int64()*cpuStep, minMilliCPU)
}

func ceilGiB(n int64) int64 { return (n + gib - 1) / gib * gib }

// milliCPU returns an override's CPU in millicores, or planned.
func milliCPU(o *v1alpha1.ComputeResources, planned int64) int64 {
	if o == nil || o.CPU == nil {
		return planned
	}
	return max(o.CPU.MilliValue(), 1)
}

// memoryOf returns an override's memory, or planned.
func memoryOf(o *v1alpha1.ComputeResources, planned int64) int64 {
	if o == nil || o.Memory == nil {
		return planned
	}
	return o.Memory.Value()
}

// kafkaPod splits a Kafka pod's memory: the heap, at most half the memory (Strimzi's own
// default share), and the native memory, at most a quarter.
func kafkaPod(role string, o *v1alpha1.ComputeResources, plannedCPU, plannedMemory, heap int64) podResources {
	mem := memoryOf(o, plannedMemory)
	return podResources{role: role, milliCPU: milliCPU(o, plannedCPU),
		memory: mem, heap: floorMiB(min(heap, mem/2)), native: floorMiB(min(kafkaNative, mem/4))}
}

// esPod splits an Elasticsearch pod's memory: the heap is half of it, at most esMaxHeap.
func esPod(role string, o *v1alpha1.ComputeResources, plannedCPU, plannedMemory int64) podResources {
	mem := memoryOf(o, plannedMemory)
	return podResources{role: role, milliCPU: milliCPU(o, plannedCPU), memory: mem, heap: floorMiB(min(mem/2, esMaxHeap))}
}

// brokerResources plans a broker: CPU for a full usable link both ways, a small heap, and a page
// cache holding brokerCacheSeconds of a full link's writes.
func brokerResources(k v1alpha1.KafkaSpec, link linkRates) podResources {
	cpu := ceilCPU(quo(mul(link.usable, ratInt(2*1000)), ratInt(kafkaBytesPerCore)))
	cache := ceilInt(mul(link.usable, ratInt(brokerCacheSeconds))).Int64()
	mem := ceilGiB(brokerHeap + kafkaNative + cache)
	return kafkaPod(v1alpha1.RoleKafkaBroker, k.Resources, cpu, mem, brokerHeap)
}

// dataNodeResources plans a data node: the CPU that indexes messagesPerSecondPerNode documents
// of messageBytes, esMemoryPerCore per core.
func dataNodeResources(es v1alpha1.ElasticsearchSpec, messageBytes int64) podResources {
	bytes := mul(ratInt(es.MessagesPerSecondPerNode), ratInt(messageBytes))
	cpu := ceilCPU(quo(mul(bytes, ratInt(1000)), ratInt(esIndexBytesPerCore)))
	mem := max(esMinMemory, ceilGiB(cpu*esMemoryPerCore/1000))
	return esPod(v1alpha1.RoleElasticsearchData, es.Resources, cpu, mem)
}

// perDataNode is what one data node indexes, in documents per second (every copy counted): the
// spec's messagesPerSecondPerNode, or less when the data node's CPU indexes less.
func perDataNode(r podResources, es v1alpha1.ElasticsearchSpec, messageBytes int64) int64 {
	byCPU := floor64(quo(mul(ratInt(r.milliCPU), ratInt(esIndexBytesPerCore)), mul(ratInt(1000), ratInt(messageBytes))))
	return max(min(es.MessagesPerSecondPerNode, byCPU), 1)
}

// brokerCPUBytes is what one broker's CPU moves, received plus sent, in bytes per second.
func brokerCPUBytes(r podResources) *big.Rat {
	return quo(mul(ratInt(r.milliCPU), ratInt(kafkaBytesPerCore)), ratInt(1000))
}

// resourcesPlan is every role's resources, in the order of Plan.Resources.
func resourcesPlan(s *v1alpha1.AnalyticsPipelineSpec, broker, data podResources) []v1alpha1.PodResources {
	var ctrl, master *v1alpha1.ComputeResources
	if c := s.Kafka.Controllers; c != nil {
		ctrl = c.Resources
	}
	if m := s.Elasticsearch.Masters; m != nil {
		master = m.Resources
	}
	all := []podResources{
		broker,
		kafkaPod(v1alpha1.RoleKafkaController, ctrl, controllerMilliCPU, controllerMemory, controllerHeap),
		data,
		esPod(v1alpha1.RoleElasticsearchMaster, master, masterMilliCPU, masterMemory),
	}
	out := make([]v1alpha1.PodResources, len(all))
	for i, r := range all {
		out[i] = v1alpha1.PodResources{
			Role:      r.role,
			CPU:       *resource.NewMilliQuantity(r.milliCPU, resource.DecimalSI),
			Memory:    binaryQuantity(r.memory),
			Heap:      binaryQuantity(r.heap),
			PageCache: binaryQuantity(r.pageCache()),
		}
	}
	return out
}

// IndexingPerDataNode is what one data node of s indexes, in documents per second (every copy
// counted): spec.elasticsearch.messagesPerSecondPerNode, or less when spec.elasticsearch.resources
// gives the data nodes less CPU than that takes. s must be defaulted (Defaults).
func IndexingPerDataNode(s *v1alpha1.AnalyticsPipelineSpec) int64 {
	return perDataNode(dataNodeResources(s.Elasticsearch, s.Workload.MessageBytes), s.Elasticsearch, s.Workload.MessageBytes)
}
