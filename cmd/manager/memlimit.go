package main

import (
	"os"
	"runtime/debug"
	"strconv"
	"strings"
)

// cgroupMemoryFiles hold the container's memory limit: cgroup v2's memory.max, then cgroup v1's
// memory.limit_in_bytes (the container's own, seen through its cgroup namespace).
var cgroupMemoryFiles = []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"}

// memoryLimitShare is the part of the container's limit the Go runtime's soft limit is set to:
// the rest is for what the runtime does not count (goroutine stacks outside the heap, the
// binary, page tables).
const memoryLimitShare = 0.9

// setMemoryLimit gives the Go runtime a soft memory limit of 90 % of the container's, unless
// GOMEMLIMIT sets one. Without it the collector lets the heap grow to twice what is live
// (GOGC=100) whatever the limit: with 1,000 pipelines that was 490 MiB, at the chart's former limit
// of 512Mi (docs/performance.md). With it the collector works harder as the limit nears instead
// (runtime/debug.SetMemoryLimit). It returns the limit set, 0 for none.
func setMemoryLimit() int64 {
	if os.Getenv("GOMEMLIMIT") != "" {
		return 0
	}
	for _, f := range cgroupMemoryFiles {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		if limit := softLimit(string(b)); limit > 0 {
			debug.SetMemoryLimit(limit)
			return limit
		}
		return 0
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
