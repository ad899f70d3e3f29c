package main

import (
	"fmt"
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/prometheus/procfs"
	"k8s.io/apimachinery/pkg/api/resource"
)

// cgroupMemoryFiles hold the container's memory limit: cgroup v2's memory.max, then cgroup v1's
// memory.limit_in_bytes (the container's own, seen through its cgroup namespace).
var cgroupMemoryFiles = []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"}

// memoryLimitShare is the part of the container's limit the Go runtime's soft limit may reach:
// the rest is for what the runtime does not count (the binary's pages, page tables).
const memoryLimitShare = 0.9

// DefaultMemoryTarget is --memory-target's default: the resident set the manager keeps to while
// the heap it needs allows it. 1,000 pipelines fit under it (docs/performance.md); fewer never
// reach it, so it costs them nothing.
const DefaultMemoryTarget = "200Mi"

// targetReserve is the part of the target left for what the collector cannot hold to: the
// heap allocated while a collection marks, and the binary's pages read in since the limit was
// last set. Without it 1,000 pipelines peaked at 194 and 197 MiB under 200.
const targetReserve = 0.05

// minHeadroom is the least the heap may grow past what was live at the last collection, as a
// part of it (Go's GOGC would say 25): the memory target gives way to it, so a heap that
// outgrows the target costs at most four times the collections of GOGC=100, never a collector
// running without pause (what a fixed soft limit under the live heap does, up to half the CPU:
// runtime/debug.SetMemoryLimit).
const minHeadroom = 0.25

// memoryTarget keeps the Go runtime's soft memory limit (runtime/debug.SetMemoryLimit) at the
// resident set aimed for, less a reserve and what the runtime does not count (the binary's
// resident pages), and never under the live heap plus minHeadroom, nor over 90 % of the
// container's limit. Go's
// collector lets the heap grow to twice what was live (GOGC=100): at 1,000 pipelines about 110
// MB live at the peak of their creation made 300 MiB resident. Under the limit the collector
// runs when the heap nears it instead, and only then: a heap far under the target is collected
// as Go would.
type memoryTarget struct {
	// target is the resident set aimed for, in bytes (0: none); cgroup the container's soft
	// limit (0: none).
	target, cgroup int64
	// fileResident reads the binary's resident pages (RssFile); a variable for tests.
	fileResident func() int64
	// limit is the soft limit last set, for the manager's log and tests.
	limit atomic.Int64
}

// newMemoryTarget is the manager's memory target: target bytes of resident set (0 for none) and
// the container's limit, unless GOMEMLIMIT sets Go's limit itself (then nil: the user chose).
func newMemoryTarget(target int64) *memoryTarget {
	if os.Getenv("GOMEMLIMIT") != "" {
		return nil
	}
	m := &memoryTarget{target: target, cgroup: containerSoftLimit(), fileResident: fileResident}
	if m.target == 0 && m.cgroup == 0 {
		return nil
	}
	return m
}

// start sets the limit and, for a target, keeps it current after every collection: a finalizer
// on an unreachable object runs once the collector finds it, and sets one on a new one. The
// container's limit alone is set once.
func (m *memoryTarget) start() {
	m.adjust()
	if m.target > 0 {
		watchCollections(func() bool { m.adjust(); return true })
	}
}

// watchCollections calls f after each garbage collection for as long as f returns true.
func watchCollections(f func() bool) {
	sentinel := new([16]byte) // a pointer-free object of its own size class: not a tiny allocation
	runtime.SetFinalizer(sentinel, func(*[16]byte) {
		if f() {
			watchCollections(f)
		}
	})
}

// heapSamples are what adjust reads of the runtime (runtime/metrics).
var heapSamples = []metrics.Sample{
	{Name: "/gc/heap/live:bytes"},
	{Name: "/memory/classes/total:bytes"},
	{Name: "/memory/classes/heap/released:bytes"},
	{Name: "/memory/classes/heap/objects:bytes"},
	{Name: "/memory/classes/heap/unused:bytes"},
	{Name: "/memory/classes/heap/free:bytes"},
}

// adjust sets the soft limit from the heap live at the last collection. It runs on the
// finalizer goroutine, one call at a time.
func (m *memoryTarget) adjust() {
	s := make([]metrics.Sample, len(heapSamples))
	copy(s, heapSamples)
	metrics.Read(s)
	v := func(i int) int64 {
		if s[i].Value.Kind() != metrics.KindUint64 {
			return 0
		}
		return int64(s[i].Value.Uint64())
	}
	live := v(0)
	// What the limit counts besides the heap: stacks, the runtime's metadata, its buffers.
	other := max(0, v(1)-v(2)-v(3)-v(4)-v(5))
	limit := limitFor(m.target, m.fileResident(), m.cgroup, live, other)
	if limit != m.limit.Load() {
		debug.SetMemoryLimit(limit)
		m.limit.Store(limit)
	}
}

// limitFor is the soft limit for a resident target (0: none) with fileResident bytes of the
// binary resident, a container's soft limit (0: none), live bytes of heap and other bytes the
// runtime counts besides it.
func limitFor(target, fileResident, cgroup, live, other int64) int64 {
	limit := int64(math.MaxInt64) // Go's "no limit"
	if target > 0 {
		limit = max(int64(float64(target)*(1-targetReserve))-fileResident, other+live+int64(float64(live)*minHeadroom))
	}
	if cgroup > 0 {
		limit = min(limit, cgroup)
	}
	return limit
}

// containerSoftLimit is 90 % of the container's memory limit, 0 for none.
func containerSoftLimit() int64 {
	for _, f := range cgroupMemoryFiles {
		if b, err := os.ReadFile(f); err == nil {
			return softLimit(string(b))
		}
	}
	return 0
}

// softLimit is the soft limit for a cgroup memory limit file's content: 0 for none ("max", or
// cgroup v1's page-rounded maximum, which means unlimited).
func softLimit(content string) int64 {
	s := strings.TrimSpace(content)
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 || n >= 1<<62 {
		return 0
	}
	return int64(float64(n) * memoryLimitShare)
}

// fileResident is the process's resident file-backed pages (RssFile of /proc/self/status, read
// by prometheus/procfs, which the metrics' process collector already uses): the binary's code
// and data as the kernel mapped them in, about 45 MB, which the resident set counts and Go's
// limit does not. 0 where it cannot be read.
func fileResident() int64 {
	p, err := procfs.Self()
	if err != nil {
		return 0
	}
	s, err := p.NewStatus()
	if err != nil {
		return 0
	}
	return int64(s.RssFile)
}

// quantityFlag is a flag holding a resource quantity ("200Mi"), its value in bytes.
type quantityFlag struct{ q resource.Quantity }

func (f *quantityFlag) String() string { return f.q.String() }

func (f *quantityFlag) Set(v string) error {
	q, err := resource.ParseQuantity(v)
	if err != nil {
		return err
	}
	if q.Sign() < 0 {
		return fmt.Errorf("%s is negative", v)
	}
	f.q = q
	return nil
}
