package lab

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// Disk load of the executorDisk scenario, in MiB per second: writes above the alert's 20 MiB/s
// per executor for the plan's two (HeavySpill averages over 5 minutes, so it fires about a
// minute in), and reads above both the alert's 10 MiB/s and the writes, so that the
// autoscaler's memory split sees no spill dominating (it decides nothing in the lab).
const (
	executorDiskWriteMiB = 200
	executorDiskReadMiB  = 256
)

// executorDisk: a process in one executor's container writes and reads the executor's local
// disk directly (past the page cache), as an executor spilling and reading its spill files back
// does, while its page cache holds a small part of the plan's reserve. cAdvisor reports the
// pod's disk counters as the kubelet does, and the generated alerts fire under Prometheus' own
// evaluation: StrataExecutorHeavySpill for the pipeline (its executors write far more than their
// shuffle files), StrataExecutorPageCacheStarved for that executor's pod (it reads more than
// 10 MiB/s from disk with less than half its page-cache reserve).
func executorDisk(t *testing.T, ctx context.Context, l *Lab) {
	switch {
	case l.CAdvisor == nil:
		t.Skip("not root: no cAdvisor, the executors' disk series and their alerts are not checked")
	case l.CAdvisor.device == "":
		t.Skip("the lab's files are on no block device: the executors' disk I/O is not counted, their alerts are not checked")
	}
	execs := l.Job.Executors()
	if len(execs) == 0 {
		t.Fatal("the job runs no executor")
	}
	pod := execs[0].Pod
	began := time.Now()
	load := l.CAdvisor.DiskLoad(t, l.dir, pod, executorDiskWriteMiB, executorDiskReadMiB)
	defer load.Stop()
	for _, c := range []struct {
		alert string
		want  map[string]string
	}{
		{"StrataExecutorPageCacheStarved", map[string]string{"namespace": PipelineNamespace, "pipeline": l.Pipeline.Name, "pod": pod}},
		{"StrataExecutorHeavySpill", map[string]string{"namespace": PipelineNamespace, "pipeline": l.Pipeline.Name}},
	} {
		r, ok := l.WaitAlert(ctx, c.alert, "firing", 4*time.Minute)
		if !ok {
			t.Errorf("%s not firing %s into the disk load of %s: %v", c.alert, time.Since(began).Round(time.Second), pod, r)
			continue
		}
		got := r.Series[0].Labels
		for k, v := range c.want {
			if got[k] != v {
				t.Errorf("%s fires for %v, want %s=%q", c.alert, got, k, v)
			}
		}
		t.Logf("%s firing %s after %s began writing %d MiB/s and reading %d MiB/s", c.alert,
			time.Since(began).Round(time.Second), pod, executorDiskWriteMiB, executorDiskReadMiB)
	}
	// What the alerts read, as the dashboard shows it.
	for _, q := range []string{
		fmt.Sprintf(`sum(rate(container_fs_writes_bytes_total{pod=%q}[1m]))`, pod),
		fmt.Sprintf(`sum(rate(container_fs_reads_bytes_total{pod=%q}[1m]))`, pod),
		fmt.Sprintf(`sum(container_memory_cache{pod=%q, container!=""})`, pod),
	} {
		if r := l.Prometheus.Query(ctx, q); r.Err == nil && len(r.Series) == 1 {
			t.Logf("%s = %.3g", q, r.Series[0].Value)
		}
	}
}
