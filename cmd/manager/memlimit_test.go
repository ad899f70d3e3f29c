package main

import (
	"math"
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

func TestSoftLimit(t *testing.T) {
	for _, c := range []struct {
		content string
		want    int64
	}{
		{"536870912\n", 483183820},   // the chart's 512Mi
		{"max\n", 0},                 // cgroup v2, no limit
		{"9223372036854771712\n", 0}, // cgroup v1, no limit
		{"", 0},
		{"-1", 0},
	} {
		if got := softLimit(c.content); got != c.want {
			t.Errorf("softLimit(%q) = %d, want %d", c.content, got, c.want)
		}
	}
}

func TestLimitFor(t *testing.T) {
	const mi = 1 << 20
	for _, c := range []struct {
		name                              string
		target, file, cgroup, live, other int64
		want                              int64
	}{
		{name: "no target, no container limit: Go's default", live: 100 * mi, want: math.MaxInt64},
		{name: "no target: the container's soft limit", cgroup: 921 * mi, live: 100 * mi, want: 921 * mi},
		// 1,000 pipelines at rest: 78 MB live, far under the target less the binary's pages.
		{name: "a small heap: the target less its reserve and the binary", target: 200 * mi, file: 46 * mi, live: 78 * mi, other: 12 * mi, want: 144 * mi},
		// The creation's peak: 104 MB live leaves 26 MB to grow under 144, and the floor is 142.
		{name: "near the target: the target holds", target: 200 * mi, file: 46 * mi, live: 104 * mi, other: 12 * mi, want: 144 * mi},
		{name: "at the target: the floor", target: 200 * mi, file: 46 * mi, live: 112 * mi, other: 12 * mi, want: 152 * mi},
		// Three times as many pipelines: the target gives way to a quarter of the live heap.
		{name: "a heap past the target: a quarter to grow", target: 200 * mi, file: 46 * mi, live: 300 * mi, other: 20 * mi, want: 395 * mi},
		{name: "the container's limit caps the floor", target: 200 * mi, file: 46 * mi, cgroup: 230 * mi, live: 300 * mi, other: 20 * mi, want: 230 * mi},
		{name: "the container's limit under the target", target: 200 * mi, file: 46 * mi, cgroup: 115 * mi, live: 20 * mi, want: 115 * mi},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := limitFor(c.target, c.file, c.cgroup, c.live, c.other); got != c.want {
				t.Errorf("limitFor = %d MiB, want %d MiB", got/mi, c.want/mi)
			}
		})
	}
}

// TestMemoryTargetFollowsCollections: the limit is set at start and set again after a
// collection, from the heap the collection left live.
func TestMemoryTargetFollowsCollections(t *testing.T) {
	before := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(before) })

	file := int64(1 << 30)
	target := int64(2 << 30)
	m := &memoryTarget{target: target, fileResident: func() int64 { return file }}
	m.adjust()
	// The target less its reserve and the binary's pages is 2 GiB × 0.95 − 1 GiB, more than a
	// test binary's live heap.
	want := int64(float64(target)*(1-targetReserve)) - file
	if got := debug.SetMemoryLimit(-1); got != want || m.limit.Load() != got {
		t.Fatalf("limit = %d, remembered %d, want %d", got, m.limit.Load(), want)
	}

	// A binary's pages leaving no room: the floor, a quarter above the live heap, set once the
	// next collection has run.
	file = 2 << 30
	collected := make(chan struct{}, 1)
	watchCollections(func() bool {
		m.adjust()
		collected <- struct{}{}
		return false // once: the other tests keep Go's limit
	})
	deadline := time.After(time.Minute)
	for done := false; !done; {
		runtime.GC()
		select {
		case <-collected:
			done = true
		case <-deadline:
			t.Fatal("no adjustment after a minute of collections")
		case <-time.After(10 * time.Millisecond):
		}
	}
	got := debug.SetMemoryLimit(-1)
	if got >= 64<<20 || got <= 0 {
		t.Errorf("limit after a collection = %d, want the floor under 64 MiB (a test's heap)", got)
	}
}

func TestMemoryTargetOff(t *testing.T) {
	t.Setenv("GOMEMLIMIT", "1GiB")
	if m := newMemoryTarget(200 << 20); m != nil {
		t.Errorf("GOMEMLIMIT set: a memory target %+v, want none", m)
	}
}

func TestQuantityFlag(t *testing.T) {
	var f quantityFlag
	if err := f.Set("200Mi"); err != nil || f.q.Value() != 200<<20 {
		t.Errorf("Set(200Mi) = %v, %d", err, f.q.Value())
	}
	for _, bad := range []string{"-1Mi", "lots"} {
		if err := f.Set(bad); err == nil {
			t.Errorf("Set(%q) accepted", bad)
		}
	}
}

func TestFileResident(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("RssFile is read from Linux's /proc/self/status; not checked on " + runtime.GOOS)
	}
	if got := fileResident(); got <= 0 {
		t.Errorf("fileResident = %d, want the test binary's resident pages", got)
	}
}
