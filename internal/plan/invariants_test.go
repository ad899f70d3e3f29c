package plan_test

import (
	"encoding/json"
	"fmt"
	"math/big"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/internal/plan"
)

var xmsPattern = regexp.MustCompile(`-Xms(\d+)m\b`)

// memoryProblem returns what is wrong with an executor memory split, or "" when it keeps
// docs/studies.md §1.2's invariants: the four parts add up to the budget, the heap is at least
// minHeap, the JVM starts below its maximum heap (so it can give memory back), and the Spark
// settings describe the same split.
func memoryProblem(m v1alpha1.MemorySpec, em v1alpha1.ExecutorMemory) string {
	budget := m.Budget.Value()
	heap, off, over, page := em.Heap.Value(), em.OffHeap.Value(), em.Overhead.Value(), em.PageCache.Value()
	minHeap := int64(1 << 30)
	if m.MinHeap != nil {
		minHeap = m.MinHeap.Value()
	}
	switch {
	case heap+off+over+page != budget:
		return fmt.Sprintf("heap %d + offHeap %d + overhead %d + pageCache %d != budget %d", heap, off, over, page, budget)
	case em.Pod.Cmp(m.Budget) != 0:
		return fmt.Sprintf("pod %s != budget %s", em.Pod.String(), m.Budget.String())
	case heap < minHeap:
		return fmt.Sprintf("heap %d < minHeap %d", heap, minHeap)
	case heap <= 0 || off < 0 || over < 0 || page < 0:
		return fmt.Sprintf("negative part: %+v", em)
	case strings.Contains(em.JavaOptions, "-Xmx"):
		return "javaOptions set -Xmx, which Spark rejects"
	}
	xms := xmsPattern.FindStringSubmatch(em.JavaOptions)
	if xms == nil {
		return fmt.Sprintf("no -Xms in %q", em.JavaOptions)
	}
	if n, _ := strconv.ParseInt(xms[1], 10, 64); n<<20 >= heap {
		return fmt.Sprintf("-Xms %dm is not below the heap %d", n, heap)
	}
	mib := func(key string) int64 {
		v := em.SparkConf[key]
		if v == "" {
			return 0
		}
		n, err := strconv.ParseInt(strings.TrimSuffix(v, "m"), 10, 64)
		if err != nil || !strings.HasSuffix(v, "m") {
			return -1
		}
		return n << 20
	}
	if got := mib("spark.executor.memory"); got != heap {
		return fmt.Sprintf("spark.executor.memory %d != heap %d", got, heap)
	}
	if got := mib("spark.memory.offHeap.size"); got != off {
		return fmt.Sprintf("spark.memory.offHeap.size %d != offHeap %d", got, off)
	}
	if (off > 0) != (em.SparkConf["spark.memory.offHeap.enabled"] == "true") {
		return "spark.memory.offHeap.enabled disagrees with offHeap"
	}
	// The pod Spark requests: memory + memoryOverhead + offHeap.size, in whole MiB.
	if pod := mib("spark.executor.memory") + mib("spark.executor.memoryOverhead") + mib("spark.memory.offHeap.size"); pod != budget/(1<<20)<<20 {
		return fmt.Sprintf("Spark would request %d for the pod, want the budget %d in whole MiB", pod, budget)
	}
	return ""
}

func checkMemory(t *testing.T, m v1alpha1.MemorySpec, em v1alpha1.ExecutorMemory) {
	t.Helper()
	if p := memoryProblem(m, em); p != "" {
		t.Errorf("memory %s/%s pc %d off %d: %s", m.Budget.String(), m.MinHeap, m.PageCachePercent, m.OffHeapPercent, p)
	}
}

// planProblem checks invariants every successful plan keeps.
func planProblem(in *v1alpha1.AnalyticsPipeline, p v1alpha1.Plan) string {
	s := in.Spec
	r := max(s.Kafka.ReplicationFactor, 1)
	if s.Kafka.ReplicationFactor == 0 {
		r = 3
	}
	switch {
	case p.Brokers < max(s.Kafka.Brokers.Min, r) || p.Brokers > s.Kafka.Brokers.Max:
		return fmt.Sprintf("brokers %d outside [max(%d, R=%d), %d]", p.Brokers, s.Kafka.Brokers.Min, r, s.Kafka.Brokers.Max)
	case p.Executors < s.Spark.Executors.Min || p.Executors > s.Spark.Executors.Max:
		return fmt.Sprintf("executors %d outside %+v", p.Executors, s.Spark.Executors)
	case p.ElasticsearchDataNodes < s.Elasticsearch.DataNodes.Min || p.ElasticsearchDataNodes > s.Elasticsearch.DataNodes.Max:
		return fmt.Sprintf("data nodes %d outside %+v", p.ElasticsearchDataNodes, s.Elasticsearch.DataNodes)
	case (p.Bottleneck == v1alpha1.BottleneckNone) != (p.Unsatisfied == ""):
		return fmt.Sprintf("bottleneck %q but unsatisfied %q", p.Bottleneck, p.Unsatisfied)
	case strings.Count(p.Unsatisfied, plan.ReasonSeparator)+1 > 9:
		return fmt.Sprintf("more reasons than there are checks, a reason contains the separator: %q", p.Unsatisfied)
	case len(p.Stages) != 7 || len(p.Storage) != 4:
		return fmt.Sprintf("%d stages, %d storage rows", len(p.Stages), len(p.Storage))
	}
	low := p.Stages[0].MaxMessagesPerSecond
	for _, st := range p.Stages {
		low = min(low, st.MaxMessagesPerSecond)
	}
	if p.MaxMessagesPerSecond != low {
		return fmt.Sprintf("maxMessagesPerSecond %d is not the smallest stage capacity %d", p.MaxMessagesPerSecond, low)
	}
	if problem := busiestBrokerProblem(plan.Defaults(in).Spec, p); problem != "" {
		return problem
	}
	if problem := partitionsProblem(plan.Defaults(in).Spec, p); problem != "" {
		return problem
	}
	if problem := shuffleDiskProblem(plan.Defaults(in).Spec, p); problem != "" {
		return problem
	}
	return memoryProblem(in.Spec.Spark.Memory, p.ExecutorMemory)
}

// busiestBrokerProblem checks the per-broker rates against the cluster's traffic ÷ B: the
// busiest broker carries at least that mean, and exactly it when B divides P·R (receives and log
// writes) or P (sends).
func busiestBrokerProblem(s v1alpha1.AnalyticsPipelineSpec, p v1alpha1.Plan) string {
	i := new(big.Int).Mul(big.NewInt(s.Workload.MessagesPerSecond), big.NewInt(s.Workload.MessageBytes))
	c := new(big.Int).Mul(big.NewInt(s.Workload.ConsumerMessagesPerSecond), big.NewInt(s.Workload.MessageBytes))
	r, b, parts := int64(p.ReplicationFactor), int64(p.Brokers), int64(p.Partitions)
	meanRecv := new(big.Int).Quo(new(big.Int).Mul(i, big.NewInt(r)), big.NewInt(b))
	meanSend := new(big.Int).Quo(new(big.Int).Add(c, new(big.Int).Mul(i, big.NewInt(r-1))), big.NewInt(b))
	for _, x := range []struct {
		name      string
		got       int64
		mean      *big.Int
		divisible bool
	}{
		{"brokerReceiveBytesPerSecond", p.BrokerReceiveBytesPerSecond, meanRecv, parts*r%b == 0},
		{"brokerDiskWriteBytesPerSecond", p.BrokerDiskWriteBytesPerSecond, meanRecv, parts*r%b == 0},
		{"brokerSendBytesPerSecond", p.BrokerSendBytesPerSecond, meanSend, parts%b == 0},
	} {
		switch cmp := big.NewInt(x.got).Cmp(x.mean); {
		case cmp < 0:
			return fmt.Sprintf("%s %d below the mean %s (P %d, R %d, B %d)", x.name, x.got, x.mean, parts, r, b)
		case cmp > 0 && x.divisible:
			return fmt.Sprintf("%s %d over the mean %s though B divides (P %d, R %d, B %d)", x.name, x.got, x.mean, parts, r, b)
		}
	}
	return ""
}

// partitionsProblem checks the partition count: a fixed one as given; an automatic one at least
// executors × cores (a partition for every core) and the smallest multiple of the brokers from
// there, so that every broker leads P/B and holds P·R/B, unless that multiple is over
// v1alpha1.MaxAutoPartitions, when it is executors × cores itself.
func partitionsProblem(s v1alpha1.AnalyticsPipelineSpec, p v1alpha1.Plan) string {
	if fixed := s.Kafka.Topic.Partitions; fixed > 0 {
		if p.Partitions != fixed {
			return fmt.Sprintf("partitions %d, but spec.kafka.topic.partitions is %d", p.Partitions, fixed)
		}
		return ""
	}
	f, parts, b := int64(p.Executors)*int64(p.ExecutorCores), int64(p.Partitions), int64(p.Brokers)
	roundedUp := (f + b - 1) / b * b
	switch {
	case parts > v1alpha1.MaxAutoPartitions:
		return fmt.Sprintf("automatic partitions %d over the cap %d", parts, v1alpha1.MaxAutoPartitions)
	case roundedUp > v1alpha1.MaxAutoPartitions:
		if parts != f {
			return fmt.Sprintf("automatic partitions %d: %d executor cores rounded up to a multiple of %d brokers is over the cap %d, want the cores themselves",
				parts, f, b, v1alpha1.MaxAutoPartitions)
		}
	case parts != roundedUp:
		return fmt.Sprintf("automatic partitions %d, want %d: %d executor cores rounded up to a multiple of %d brokers", parts, roundedUp, f, b)
	}
	return ""
}

func equalJSON(t *testing.T, a, b any) bool {
	t.Helper()
	ja, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	jb, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	return string(ja) == string(jb)
}
