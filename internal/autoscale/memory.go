package autoscale

import (
	"fmt"

	"k8s.io/utils/ptr"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/internal/plan"
)

// The memory split (docs/studies.md §1.2). Shuffle files are read back through the page cache, which
// is charged to the executor's pod: when executors read from disk what they wrote moments
// before, and keep reading back pages the kernel had just evicted, while their page cache is
// already full to its reserve, the reserve is too small, and a smaller heap would serve them
// better. When they spill more than they read shuffle data back, Spark is short of execution
// memory instead: the split moves from page cache to off-heap memory, which Spark uses for
// execution and which goes back to the OS (and so to the page cache) when freed.
//
// Each step moves memoryStep points of the budget, and a shift must leave room for minHeap
// after the native overhead, as the plan requires. Toward page cache is treated like a
// scale-up (the scale-up window), toward off-heap like a scale-down (the stabilisation window).
//
// All are estimates, not overridable; maxPageCache and maxOffHeap are the API's bounds of
// spec.spark.memory.pageCachePercent and offHeapPercent.
const (
	memoryStep = 5
	// refaultsPerSecond: file pages refaulted per second, over all executors, that count as
	// thrashing (1 MiB/s of 4 KiB pages); readBytesPerSecond and spillBytesPerSecond: disk
	// reads and spill below these are too little to act on.
	refaultsPerSecond   = 256
	readBytesPerSecond  = 1 << 20
	spillBytesPerSecond = 1 << 20
	// cacheFull: the page cache is at its reserve when it holds this share of it or more.
	cacheFull    = 0.9
	maxPageCache = 80
	maxOffHeap   = 90
)

// memory shifts the executors' memory split when its signals agree for long enough. Its signals
// are optional (not every installation exports refaults or spill): with neither the page cache
// nor the spill known the split stays as planned, and nothing is reported missing.
func (r *recommender) memory(cur State) {
	w := window(r.st, v1alpha1.ResourceMemorySplit)
	pc, off := cur.PageCachePercent, cur.OffHeapPercent
	reads, okReads := r.value(ExecutorDiskReadBytes)
	cache, okCache := r.value(ExecutorPageCacheBytes)
	refaults, okRefaults := r.value(ExecutorFileRefaults)
	spill, okSpill := r.value(ExecutorSpillBytes)
	if !okReads || (!okSpill && !okCache) {
		forget(w)
		return
	}
	reserve := float64(r.pol.Memory.Budget.Value()) * float64(pc) / 100
	// Refaults are the direct sign of a cache too small, but cAdvisor exports them only from
	// v0.60 (Kubernetes 1.37+, cgroup v2). Without them, disk reads while the cache is full to
	// its reserve stand in: executors read back shuffle files written moments before, which a
	// cache large enough would still hold. Without this the split could only ever move toward
	// off-heap memory.
	thrashing := !okRefaults || refaults > refaultsPerSecond
	starved := okCache && thrashing && reads > readBytesPerSecond && cache >= cacheFull*reserve
	spilling := okSpill && spill > spillBytesPerSecond && spill > reads

	want := pc
	switch {
	case starved && !spilling && r.fits(pc+memoryStep, off):
		want = pc + memoryStep
	case spilling && !starved && r.fits(pc-memoryStep, off+memoryStep):
		want = pc - memoryStep
	}
	keep := max(r.pol.Stabilization, r.upSpan()) + r.pol.Interval
	observe(w, want, want, r.now, 2*r.pol.Interval+r.pol.Interval/2, keep)
	if cooling, _ := coolingDown(w, r.now, r.cooldown(v1alpha1.ResourceMemorySplit)); cooling {
		return
	}
	refaulted := fmt.Sprintf("refault %.0f pages/s", refaults)
	if !okRefaults {
		refaulted = "refaults unknown"
	}
	what := fmt.Sprintf("executors read %s from disk (%s) with %s of page cache each (reserve %s), spill %s",
		rate(reads), refaulted, bytes(cache), bytes(reserve), rate(spill))
	if up, full := minUp(w, r.now, r.upSpan()); full && up > pc {
		r.shift(pc, off, pc+memoryStep, off, "PageCacheStarved", what)
		return
	}
	if down, full := maxDown(w, r.now, r.pol.Stabilization); full && down < pc {
		r.shift(pc, off, pc-memoryStep, off+memoryStep, "SpillDominates", what)
	}
}

// fits says whether a split is allowed and leaves room for the minimum heap.
func (r *recommender) fits(pageCache, offHeap int32) bool {
	if pageCache < 0 || pageCache > maxPageCache || offHeap < 0 || offHeap > maxOffHeap {
		return false
	}
	m := *r.pol.Memory.DeepCopy()
	m.PageCachePercent, m.OffHeapPercent = pageCache, offHeap
	return plan.CheckMemory(m) == nil
}

func (r *recommender) shift(pc, off, toPC, toOff int32, reason, what string) {
	if !r.fits(toPC, toOff) {
		return
	}
	r.st.PageCachePercent, r.st.OffHeapPercent = ptr.To(toPC), ptr.To(toOff)
	r.change(v1alpha1.ResourceMemorySplit, v1alpha1.ActionShift, pc, toPC, reason,
		fmt.Sprintf("page cache %d%% -> %d%%, off-heap %d%% -> %d%%: %s", pc, toPC, off, toOff, what))
	r.coolSpark()
}

// bytes formats a size for messages.
func bytes(b float64) string {
	switch {
	case b >= 1<<30:
		return fmt.Sprintf("%.1fGi", b/(1<<30))
	default:
		return fmt.Sprintf("%.0fMi", b/(1<<20))
	}
}
