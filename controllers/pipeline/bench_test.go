package pipeline_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/controllers/internal/envtestutil"
	"github.com/strata-dev/strata/internal/controlplane"
	"github.com/strata-dev/strata/internal/desired"
	"github.com/strata-dev/strata/internal/testutil"
)

// BenchmarkScale creates N pipelines against a real control plane and reports: the time until
// all of them are planned (PlanValid=True) and have their children, the operator's API writes
// per pipeline, the writes of a full resync with nothing changed (a restarted operator: must be
// 0), the peak heap of this process (operator and load generator) and, as the ceiling any
// operator works under, the raw create rate of the same API server for plain ConfigMaps.
// Run with -benchtime 1x: one iteration is one whole scenario (`make bench` does).
// STRATA_BENCH_PIPELINES overrides the sizes (comma-separated).
func BenchmarkScale(b *testing.B) {
	sizes := []int{100, 1000}
	if env := os.Getenv("STRATA_BENCH_PIPELINES"); env != "" {
		sizes = nil
		for _, f := range strings.Split(env, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n < 2 {
				b.Fatalf("STRATA_BENCH_PIPELINES: %q is not a count of at least 2", f)
			}
			sizes = append(sizes, n)
		}
	}
	for _, n := range sizes {
		b.Run(fmt.Sprintf("pipelines=%d", n), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				scale(b, n)
			}
		})
	}
}

func scale(b *testing.B, n int) {
	ctx := context.Background()
	peak := watchHeap()
	defer peak.stop()
	o := envtestutil.StartOperator(b)

	// The ceiling: plain ConfigMaps created one after another by one client.
	cmNS, err := controlplane.NewNamespace(ctx, o.C, "ceiling")
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	for i := 0; i < n; i++ {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: cmNS, Name: fmt.Sprintf("cm-%04d", i)},
			Data: map[string]string{"k": "v"}}
		if err := o.C.Create(ctx, cm); err != nil {
			b.Fatal(err)
		}
	}
	ceiling := float64(n) / time.Since(start).Seconds()

	ns, _ := o.CreateSamples(b)
	template := &unstructured.Unstructured{}
	template.SetGroupVersionKind(v1alpha1.GroupVersion.WithKind("AnalyticsPipeline"))
	if err := o.C.Get(ctx, client.ObjectKey{Namespace: ns, Name: "sensors"}, template); err != nil {
		b.Fatal(err)
	}
	waitAll(b, o, ns, 1) // the sample itself
	writesBefore := o.Writes.Load()

	b.ResetTimer()
	start = time.Now()
	for i := 1; i < n; i++ {
		p := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": template.GetAPIVersion(), "kind": template.GetKind(),
			"metadata": map[string]any{"namespace": ns, "name": fmt.Sprintf("p-%04d", i)},
			"spec":     template.Object["spec"],
		}}
		if err := o.C.Create(ctx, p); err != nil {
			b.Fatal(err)
		}
	}
	waitAll(b, o, ns, n)
	elapsed := time.Since(start)
	b.StopTimer()
	quiet(o.Writes, 3*time.Second) // late status updates belong to the creation, not the resync
	writes := o.Writes.Load() - writesBefore

	// A full resync: a new operator process starts from nothing but the cluster's state; each
	// pipeline's first reconcile is where its writes would be.
	list := &v1alpha1.AnalyticsPipelineList{}
	if err := o.C.List(ctx, list, client.InNamespace(ns)); err != nil {
		b.Fatal(err)
	}
	o.StopManager()
	o.StartManager(b)
	resync := 0
	for i := range list.Items {
		p := &list.Items[i]
		resync += o.History.Finished(b, "analyticspipeline", client.ObjectKeyFromObject(p), envtestutil.Saw("AnalyticsPipeline", p, p.ResourceVersion)).Writes
	}

	b.ReportMetric(elapsed.Seconds(), "s-until-planned")
	b.ReportMetric(float64(n)/elapsed.Seconds(), "pipelines/s")
	b.ReportMetric(float64(writes)/float64(n-1), "writes/pipeline")
	b.ReportMetric(float64(resync), "resync-writes")
	b.ReportMetric(ceiling, "configmaps/s")
	b.ReportMetric(float64(peak.max.Load())/(1<<20), "peak-heap-MiB")
	b.ReportMetric(float64(vmHWM())/(1<<10), "peak-rss-MiB")
	if resync != 0 {
		b.Errorf("a full resync with nothing changed made %d writes, want 0: %v", resync, envtestutil.WritesByKind(o.ByKind))
	}
}

// waitAll waits until n pipelines in ns are planned and each has its SparkApplication, the
// child applied last.
func waitAll(b *testing.B, o *envtestutil.Operator, ns string, n int) {
	b.Helper()
	ctx := context.Background()
	testutil.Eventually(b, 20*time.Minute, fmt.Sprintf("%d pipelines planned", n), func() error {
		list := &v1alpha1.AnalyticsPipelineList{}
		apps := &unstructured.UnstructuredList{}
		apps.SetGroupVersionKind(desired.SparkApplicationGVK.GroupVersion().WithKind("SparkApplicationList"))
		if err := o.C.List(ctx, list, client.InNamespace(ns)); err != nil {
			return err
		}
		if err := o.C.List(ctx, apps, client.InNamespace(ns)); err != nil {
			return err
		}
		planned := 0
		for i := range list.Items {
			if envtestutil.Condition(list.Items[i].Status.Conditions, v1alpha1.ConditionPlanValid, metav1.ConditionTrue, "") == nil {
				planned++
			}
		}
		if planned < n || len(apps.Items) < n {
			return fmt.Errorf("%d pipelines planned, %d SparkApplications", planned, len(apps.Items))
		}
		return nil
	})
}

// quiet waits until the counter has not moved for d: where the benchmark ends its count of
// creation's writes (a figure it reports, not an assertion).
func quiet(c *atomic.Int64, d time.Duration) {
	last, since := c.Load(), time.Now()
	for time.Since(since) < d {
		time.Sleep(100 * time.Millisecond)
		if v := c.Load(); v != last {
			last, since = v, time.Now()
		}
	}
}

// heapWatch samples the heap in use, keeping the largest value seen.
type heapWatch struct {
	max  atomic.Uint64
	done chan struct{}
}

func watchHeap() *heapWatch {
	w := &heapWatch{done: make(chan struct{})}
	go func() {
		var m runtime.MemStats
		for {
			runtime.ReadMemStats(&m)
			if m.HeapInuse > w.max.Load() {
				w.max.Store(m.HeapInuse)
			}
			select {
			case <-w.done:
				return
			case <-time.After(200 * time.Millisecond):
			}
		}
	}()
	return w
}

func (w *heapWatch) stop() { close(w.done) }

// vmHWM is this process's peak resident set in KiB (Linux), 0 where unknown.
func vmHWM() int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if rest, ok := strings.CutPrefix(s.Text(), "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.Fields(rest)[0], 10, 64)
			return kb
		}
	}
	return 0
}
