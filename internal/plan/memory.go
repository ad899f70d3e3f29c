package plan

import (
	"fmt"
	"strconv"

	"github.com/strata-dev/strata/api/v1alpha1"
)

// The executor memory model.
//
// The page cache that an executor's shuffle and spill files go through is charged to the
// executor's memory cgroup, so it must fit inside the pod's limit; and a smaller heap that
// leaves more page cache beat a bigger heap for shuffle-heavy work (docs/studies.md §1.2). The budget
// is therefore split four ways:
//
//	pageCache = budget × pageCachePercent/100, rounded down to MiB
//	overhead  = max(384Mi, (budget − pageCache)/11), rounded up to MiB — 10 % of the JVM's memory
//	spark     = budget − pageCache − overhead
//	offHeap   = spark × offHeapPercent/100, rounded down to MiB
//	heap      = spark − offHeap
//
// so heap + offHeap + overhead + pageCache = budget exactly.
//
// The admission rule on MemorySpec (a CEL expression in api/v1alpha1) computes the same split in
// bytes, without the MiB rounding. Compute rejects whatever that rule rejects (admissionHeap
// repeats its arithmetic), and for a budget and minHeap in whole MiB the rounded heap is never
// below the rule's, so the two agree exactly; only a budget or minHeap with a fraction of a MiB,
// within a MiB or two of the limit, can pass admission and still fail here.
//
// Spark sizes executor memory in whole MiB, so heap, off-heap and overhead + page cache are
// whole MiB; a budget that is not a whole number of MiB leaves its fraction in the overhead,
// where Spark cannot see it, and the pod Spark requests is the budget rounded down to MiB.

const (
	// minOverhead is Spark's own floor for spark.executor.memoryOverhead (Spark's
	// configuration reference: "executorMemory * spark.executor.memoryOverheadFactor, with
	// minimum of 384").
	minOverhead = 384 * mib
	// sparkMinHeap is the smallest executor memory Spark starts with: its UnifiedMemoryManager
	// reserves 300 MiB and refuses executors with less than 1.5 times that (apache/spark,
	// UnifiedMemoryManager.getMaxMemory: RESERVED_SYSTEM_MEMORY_BYTES, minSystemMemory).
	sparkMinHeap = 450 * mib
	// minInitialHeap keeps -Xms at a size every JVM accepts. An estimate; not overridable.
	minInitialHeap = 64 * mib
	// g1PeriodicGCMillis makes an idle executor's G1 run a concurrent cycle at least this
	// often, which is when it gives unused heap back to the OS (JEP 346). The mechanism is
	// JEP 346's; the minute is an estimate, not overridable.
	g1PeriodicGCMillis = 60_000
)

// memorySplit is an executor's budget split, in bytes.
type memorySplit struct {
	budget, pageCache, overhead, offHeap, heap int64
	// initialHeap is -Xms: below the heap, so the JVM starts small and can shrink back.
	initialHeap int64
}

func floorMiB(n int64) int64 { return n / mib * mib }

func ceilMiB(n int64) int64 { return (n + mib - 1) / mib * mib }

// splitMemory applies the model to a validated MemorySpec (budget < 4Ti, so int64 is plenty).
func splitMemory(m v1alpha1.MemorySpec) (memorySplit, error) {
	budget := m.Budget.Value()
	minHeap := m.MinHeap.Value()

	pageCache := floorMiB(budget * int64(m.PageCachePercent) / 100)
	rest := budget - pageCache
	overhead := ceilMiB(max(minOverhead, rest/11))
	// Whatever part of a MiB the budget has beyond whole MiB stays in the overhead, so that
	// the settings Spark reads are whole MiB.
	overhead += rest % mib
	spark := rest - overhead
	offHeap := floorMiB(max(spark, 0) * int64(m.OffHeapPercent) / 100)
	heap := spark - offHeap

	s := memorySplit{budget: budget, pageCache: pageCache, overhead: overhead, offHeap: offHeap, heap: heap}
	if admitted := admissionHeap(budget, m.PageCachePercent, m.OffHeapPercent); heap < minHeap || admitted < minHeap {
		return s, fieldErr("spec.spark.memory.minHeap",
			"%s does not fit: budget %s less page cache %s (%d%%), overhead %s and off-heap %s (%d%%) leaves a heap of %s; "+
				"lower minHeap, pageCachePercent or offHeapPercent, or raise budget",
			m.MinHeap.String(), m.Budget.String(), bytesString(pageCache), m.PageCachePercent,
			bytesString(overhead), bytesString(offHeap), m.OffHeapPercent, bytesString(max(min(heap, admitted), 0)))
	}
	if heap < sparkMinHeap {
		return s, fieldErr("spec.spark.memory",
			"the heap would be %s, below the %s Spark needs to start an executor; raise budget or lower pageCachePercent or offHeapPercent",
			bytesString(max(heap, 0)), bytesString(sparkMinHeap))
	}
	s.initialHeap = max(minInitialHeap, floorMiB(min(minHeap, heap/2)))
	return s, nil
}

// admissionHeap is the heap the MemorySpec admission rule computes, with its integer
// arithmetic: page cache and overhead in bytes, truncating divisions, no MiB rounding.
func admissionHeap(budget int64, pageCachePercent, offHeapPercent int32) int64 {
	rest := budget - budget*int64(pageCachePercent)/100
	overhead := max(rest/11, minOverhead)
	return (rest - overhead) * (100 - int64(offHeapPercent)) / 100
}

// executorMemory turns a split into the plan's figures and the settings that realise it.
func executorMemory(s memorySplit, m v1alpha1.MemorySpec, cores int32) v1alpha1.ExecutorMemory {
	inMiB := func(n int64) string { return strconv.FormatInt(n/mib, 10) + "m" }
	conf := map[string]string{
		"spark.executor.memory": inMiB(s.heap),
		// Spark adds spark.memory.offHeap.size to the pod by itself; the page-cache reserve
		// has no setting of its own, so it rides in the overhead. Pod limit =
		// memory + memoryOverhead + offHeap.size = the budget.
		"spark.executor.memoryOverhead": inMiB(s.overhead + s.pageCache),
		"spark.memory.offHeap.enabled":  strconv.FormatBool(s.offHeap > 0),
		"spark.executor.cores":          strconv.Itoa(int(cores)),
		// Spark's Kubernetes entrypoint starts executors with -Xms equal to -Xmx after the
		// user's Java options, which would pin the heap at its maximum and keep the memory
		// from the page cache. The JVM reads _JAVA_OPTIONS after its command line, so this
		// -Xms wins.
		"spark.executorEnv._JAVA_OPTIONS": fmt.Sprintf("-Xms%s", inMiB(s.initialHeap)),
	}
	if s.offHeap > 0 {
		conf["spark.memory.offHeap.size"] = inMiB(s.offHeap)
	}
	return v1alpha1.ExecutorMemory{
		Heap:      binaryQuantity(s.heap),
		OffHeap:   binaryQuantity(s.offHeap),
		Overhead:  binaryQuantity(s.overhead),
		PageCache: binaryQuantity(s.pageCache),
		Pod:       m.Budget.DeepCopy(),
		SparkConf: conf,
		JavaOptions: fmt.Sprintf("-Xms%s -XX:+UseG1GC -XX:G1PeriodicGCInterval=%d -XX:MinHeapFreeRatio=10 -XX:MaxHeapFreeRatio=30",
			inMiB(s.initialHeap), g1PeriodicGCMillis),
	}
}

// CheckMemory reports whether a memory split leaves room for the minimum heap, as Compute would
// find it (nil when it does). The autoscaler checks a shifted split with it before proposing it.
func CheckMemory(m v1alpha1.MemorySpec) error {
	if m.MinHeap == nil {
		h := DefaultMinHeap.DeepCopy()
		m.MinHeap = &h
	}
	_, err := splitMemory(m)
	return err
}
