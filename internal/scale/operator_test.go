package scale

import (
	"context"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/internal/controlplane"
	"github.com/strata-dev/strata/internal/desired"
	"github.com/strata-dev/strata/internal/lab"
	"github.com/strata-dev/strata/internal/testutil"
)

// scenario is one run's size.
type scenario struct {
	pipelines int
	load      unrelated
	// changes is how many pipelines get a spec change, one every changeEvery, for the latency
	// from a change to its children applied.
	changes     int
	changeEvery time.Duration
}

// BenchmarkOperator runs the scenario of issue 30 item 5: 1,000 pipelines while the cluster
// holds 10,000 each of unrelated Secrets, ConfigMaps and Pods and 5,000 Nodes. Run with
// -benchtime 1x (`make bench` does): one iteration is one whole scenario. STRATA_BENCH_PIPELINES,
// STRATA_BENCH_UNRELATED and STRATA_BENCH_NODES change the sizes; the profiles go to
// STRATA_BENCH_OUT (default: a directory under the system's temporary one, logged);
// STRATA_BENCH_GOMEMLIMIT (e.g. 921MiB, what the chart's 1Gi limit sets) and STRATA_BENCH_GOGC
// are the operator's GOMEMLIMIT and GOGC.
func BenchmarkOperator(b *testing.B) {
	s := scenario{pipelines: envInt(b, "STRATA_BENCH_PIPELINES", 1000),
		load:    unrelated{perKind: envInt(b, "STRATA_BENCH_UNRELATED", 10000), nodes: envInt(b, "STRATA_BENCH_NODES", 5000)},
		changes: 200, changeEvery: 100 * time.Millisecond}
	s.changes = min(s.changes, s.pipelines)
	for i := 0; i < b.N; i++ {
		r := run(b, s)
		r.report(b)
	}
}

// TestOperatorProcess is the benchmark's small honest subset for `make test`: a few pipelines
// and a few hundred unrelated objects, checking what must hold at any size: every pipeline is
// planned and applied, every spec change reaches its SparkApplication, and a restarted operator
// with nothing changed writes nothing.
func TestOperatorProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts a control plane and the operator binary")
	}
	r := run(t, scenario{pipelines: 5, load: unrelated{perKind: 100, nodes: 50}, changes: 5, changeEvery: 100 * time.Millisecond})
	t.Logf("the events of a new pipeline: %v", r.events)
	t.Logf("%d pipelines in %.1fs, %.1f writes/pipeline, change p50 %.2fs p99 %.2fs, operator peak RSS %.0f MiB",
		r.pipelines, r.elapsed.Seconds(), r.writes/float64(r.pipelines), r.p50.Seconds(), r.p99.Seconds(), float64(r.usage.PeakRSS)/(1<<20))
}

func envInt(b *testing.B, name string, def int) int {
	env := os.Getenv(name)
	if env == "" {
		return def
	}
	n, err := strconv.Atoi(env)
	if err != nil || n < 1 {
		b.Fatalf("%s: %q is not a positive count", name, env)
	}
	return n
}

// result is what one run measured.
type result struct {
	pipelines int
	elapsed   time.Duration
	// ceiling and ceiling4 are the API server's raw ConfigMap create rates in this run: one
	// client creating one after another, and four clients at once (as the operator's four
	// workers).
	ceiling, ceiling4 float64
	// writes and reads are the operator's requests over creation (reads: GETs its cache did
	// not answer, lists and watches included).
	writes, reads float64
	p50, p99      time.Duration
	resyncWrites  float64
	// usage is the operator's over creation and changes; cpu its CPU seconds over creation only.
	usage, resyncUsage Usage
	cpu                float64
	// events are one pipeline's events after its creation, as "type reason action (count)".
	events []string
}

func (r result) report(b *testing.B) {
	b.ReportMetric(r.elapsed.Seconds(), "s-until-applied")
	b.ReportMetric(float64(r.pipelines)/r.elapsed.Seconds(), "pipelines/s")
	b.ReportMetric(r.writes/float64(r.pipelines), "writes/pipeline")
	b.ReportMetric(r.reads/float64(r.pipelines), "uncached-reads/pipeline")
	rate := r.writes / r.elapsed.Seconds()
	b.ReportMetric(rate, "writes/s")
	b.ReportMetric(r.ceiling, "ceiling-configmaps/s")
	b.ReportMetric(r.ceiling4, "ceiling4-configmaps/s")
	b.ReportMetric(100*rate/r.ceiling, "%-of-ceiling")
	b.ReportMetric(r.p50.Seconds(), "change-p50-s")
	b.ReportMetric(r.p99.Seconds(), "change-p99-s")
	b.ReportMetric(r.resyncWrites, "resync-writes")
	b.ReportMetric(float64(r.usage.PeakRSS)/(1<<20), "operator-peak-RSS-MiB")
	b.ReportMetric(r.cpu, "operator-CPU-s")
	b.ReportMetric(float64(r.resyncUsage.PeakRSS)/(1<<20), "restarted-peak-RSS-MiB")
	b.ReportMetric(r.resyncUsage.CPUSeconds(), "restarted-CPU-s")
}

// run runs one scenario and returns its figures; it fails t where the operator misbehaves
// (a pipeline never applied, a change never reaching its child, a resync that writes).
func run(t testing.TB, s scenario) result {
	ctx := context.Background()
	r := result{pipelines: s.pipelines}
	out := os.Getenv("STRATA_BENCH_OUT")
	if out == "" {
		out = filepath.Join(os.TempDir(), fmt.Sprintf("strata-bench-%d", time.Now().Unix()))
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Logf("profiles and the operator's logs: %s", out)

	env, c := testutil.ControlPlane(t)
	start := time.Now()
	s.load.create(t, c, 8)
	t.Logf("unrelated objects: %d each of Secrets, ConfigMaps, Pods and %d Nodes in %.1fs",
		s.load.perKind, s.load.nodes, time.Since(start).Seconds())
	r.ceiling, r.ceiling4 = ceiling(t, c, s.pipelines, 1), ceiling(t, c, s.pipelines, 4)
	// Logged now: a run stopped before its end still has its ceiling.
	t.Logf("ceiling: %.0f ConfigMap creates/s from one client, %.0f from four", r.ceiling, r.ceiling4)

	chart := lab.RenderChart(t, "strata", "strata-system")
	fixtures, template := samples(t)
	op := lab.RunOperator(t, out, chart, env.Config, c, fixtures...)
	// Leader election's Lease renewals are writes too, and so are the TokenReview and
	// SubjectAccessReview the secure metrics endpoint creates for each scrape: off, the counted
	// writes are the controllers' and their events'.
	pprofAddr := testutil.FreePort(t)
	// No upstream operator runs, so the NotReconciled timer would reconcile every pipeline again
	// three minutes after its creation, in the middle of the creation being measured: off.
	extra := []string{"--leader-elect=false", "--metrics-secure=false", "--pprof-bind-address=" + pprofAddr,
		"--upstream-status-timeout=0"}
	// GOMEMLIMIT: Go's soft limit, which the manager otherwise keeps to its --memory-target
	// (cmd/manager/memlimit.go; the process runs in no cgroup of its own, so no container limit
	// caps it); set, the target is off. GOGC: how far the collector lets the heap grow past what
	// was live.
	for _, name := range []string{"GOMEMLIMIT", "GOGC"} {
		if v := os.Getenv("STRATA_BENCH_" + name); v != "" {
			op.Env = append(op.Env, name+"="+v)
			t.Logf("the operator runs with %s=%s", name, v)
		}
	}
	// The pipeline controller's workers (--pipeline-workers): how many reconciles, each with its
	// children unpacked and its desired objects built, are in memory at once.
	// The resident memory the manager keeps to (--memory-target, the chart's memoryTarget): "0"
	// measures Go's default collector.
	if v := os.Getenv("STRATA_BENCH_MEMORY_TARGET"); v != "" {
		extra = append(extra, "--memory-target="+v)
		t.Logf("the operator runs with --memory-target=%s", v)
	}
	if v := os.Getenv("STRATA_BENCH_PIPELINE_WORKERS"); v != "" {
		extra = append(extra, "--pipeline-workers="+v)
		t.Logf("the operator runs with --pipeline-workers=%s", v)
	}
	op.Stop()
	op.Restart(t, extra...)
	scrape := Scraper{URL: "http://" + op.Address + "/metrics"}
	// A loaded operator can take long to answer: a scrape is retried, not failed.
	metrics := func() string {
		var text string
		err := testutil.Wait(5*time.Minute, func() (err error) {
			text, err = scrape.Scrape()
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return text
	}
	writes := func() float64 { return Writes(metrics()) }
	reads := func() float64 { return Sum(metrics(), "rest_client_requests_total", `method="GET"`) }
	ns, err := controlplane.NewNamespace(ctx, c, "pipelines")
	if err != nil {
		t.Fatal(err)
	}
	writesBefore, readsBefore, serverBefore := writes(), reads(), serverWrites(t, env.Config)
	usageBefore := usage(t, op.Pid())

	profile := make(chan error, 1)
	go func() { profile <- save(pprofAddr, "/debug/pprof/profile?seconds=30", filepath.Join(out, "cpu.pprof")) }()
	applied := watchApplied(t, env.Config, ns, s.pipelines)
	start = time.Now()
	for i := 0; i < s.pipelines; i++ {
		p := template.DeepCopy()
		p.Name, p.Namespace = fmt.Sprintf("p-%04d", i), ns
		if err := c.Create(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	applied()
	r.elapsed = time.Since(start)
	quiet(t, writes)
	r.writes, r.reads = writes()-writesBefore, reads()-readsBefore
	// The API server's view, less the benchmark's own creates: what the operator wrote, by kind.
	byKind := delta(serverBefore, serverWrites(t, env.Config))
	byKind["POST analyticspipelines"] -= float64(s.pipelines)
	t.Logf("the operator's writes per pipeline by kind (API server's counts): %s", perPipeline(byKind, s.pipelines))
	r.cpu = usage(t, op.Pid()).CPUSeconds() - usageBefore.CPUSeconds()
	// The heap profile, and the runtime's MemStats (the text form's end: what the heap, the
	// stacks and the runtime hold of the resident set, and the collector's next goal).
	for file, path := range map[string]string{"heap.pprof": "/debug/pprof/heap", "heap.txt": "/debug/pprof/heap?debug=1"} {
		if err := save(pprofAddr, path, filepath.Join(out, file)); err != nil {
			t.Error(err)
		}
	}
	if err := <-profile; err != nil {
		t.Error(err)
	}

	r.events = eventsOf(t, c, ns, "p-0000")
	r.p50, r.p99 = changes(t, c, env.Config, ns, s)
	// The last change's status write comes after its SparkApplication: let it land before the
	// operator stops, or the restarted one would write it.
	quiet(t, writes)
	r.usage = usage(t, op.Pid())

	// A restarted operator with nothing changed: each pipeline's first reconcile is where its
	// writes would be. Its counters start at zero.
	op.Stop()
	serverBefore = serverWrites(t, env.Config)
	op.Restart(t, extra...)
	testutil.Eventually(t, 20*time.Minute, "the restarted operator to reconcile every pipeline", func() error {
		time.Sleep(time.Second) // a scrape of 1,000 pipelines' metrics is not free
		text, err := scrape.Scrape()
		if err != nil {
			return err // retried: a loaded operator may time out
		}
		done := Sum(text, "controller_runtime_reconcile_total", `controller="analyticspipeline"`)
		depth := Sum(text, "workqueue_depth", `name="analyticspipeline"`)
		if done < float64(s.pipelines) || depth > 0 {
			return fmt.Errorf("%.0f reconciles, %.0f queued", done, depth)
		}
		return nil
	})
	quiet(t, writes)
	r.resyncWrites = writes()
	r.resyncUsage = usage(t, op.Pid())
	for file, path := range map[string]string{"heap-restarted.pprof": "/debug/pprof/heap", "heap-restarted.txt": "/debug/pprof/heap?debug=1"} {
		if err := save(pprofAddr, path, filepath.Join(out, file)); err != nil {
			t.Error(err)
		}
	}
	if r.resyncWrites != 0 {
		text := metrics()
		t.Errorf("a restarted operator with nothing changed made %.0f writes, want 0:\n%s\nthe API server's counts: %v",
			r.resyncWrites, writeLines(text), delta(serverBefore, serverWrites(t, env.Config)))
	}
	return r
}

// ceiling is the API server's raw create rate for plain ConfigMaps: n created by clients
// clients, each one after another.
func ceiling(t testing.TB, c client.Client, n, clients int) float64 {
	t.Helper()
	ctx := context.Background()
	ns, err := controlplane.NewNamespace(ctx, c, "ceiling")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	start := time.Now()
	for w := 0; w < clients; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += clients {
				cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("cm-%04d", i)},
					Data: map[string]string{"k": "v"}}
				if err := c.Create(ctx, cm); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	rate := float64(n) / time.Since(start).Seconds()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	return rate
}

// samples are the sample StorageTiers with what they need (the local tier's nodes, the HDD
// tier's StorageClass, which a bare control plane lacks) and the sample pipeline, as a template.
func samples(t testing.TB) ([]client.Object, *v1alpha1.AnalyticsPipeline) {
	t.Helper()
	objs, err := controlplane.Samples()
	if err != nil {
		t.Fatal(err)
	}
	var fixtures []client.Object
	template := &v1alpha1.AnalyticsPipeline{}
	for _, u := range objs {
		switch u.GetKind() {
		case "StorageTier":
			tier := &v1alpha1.StorageTier{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, tier); err != nil {
				t.Fatal(err)
			}
			if tier.Spec.Local == nil {
				fixtures = append(fixtures, &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: tier.Spec.StorageClassName},
					Provisioner: "kubernetes.io/no-provisioner", VolumeBindingMode: ptr.To(storagev1.VolumeBindingWaitForFirstConsumer)})
			} else {
				for i := 0; i < 24; i++ {
					fixtures = append(fixtures, &corev1.Node{ObjectMeta: metav1.ObjectMeta{
						Name: fmt.Sprintf("%s-%02d", tier.Name, i), Labels: tier.Spec.Local.NodeSelector.MatchLabels}})
				}
			}
			fixtures = append(fixtures, tier)
		case "AnalyticsPipeline":
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, template); err != nil {
				t.Fatal(err)
			}
		}
	}
	template.ObjectMeta = metav1.ObjectMeta{}
	return fixtures, template
}

// quiet waits until the operator's write count has not moved for five seconds: where a phase's
// count ends (a figure reported, not an assertion).
func quiet(t testing.TB, writes func() float64) {
	last, since := writes(), time.Now()
	for time.Since(since) < 5*time.Second {
		time.Sleep(time.Second)
		if v := writes(); v != last {
			last, since = v, time.Now()
		}
	}
}

func usage(t testing.TB, pid int) Usage {
	t.Helper()
	u, err := ReadUsage(pid)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// save writes the pprof endpoint's answer at path to file.
func save(addr, path, file string) error {
	resp, err := http.Get("http://" + addr + path)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", path, resp.Status)
	}
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = io.Copy(f, resp.Body)
	return err
}

// changes changes spec.spark.executors.cores of s.changes pipelines, one every s.changeEvery,
// and returns the p50 and p99 of the time from each change's write until the API server
// reports its SparkApplication with the new cores (the child applied last).
func changes(t testing.TB, c client.Client, cfg *rest.Config, ns string, s scenario) (p50, p99 time.Duration) {
	t.Helper()
	ctx := context.Background()
	dc, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	gvr := desired.SparkApplicationGVK.GroupVersion().WithResource("sparkapplications")
	list, err := dc.Resource(gvr).Namespace(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w, err := dc.Resource(gvr).Namespace(ns).Watch(ctx, metav1.ListOptions{ResourceVersion: list.GetResourceVersion()})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	var mu sync.Mutex
	sent := map[string]time.Time{}
	var latencies []time.Duration
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range w.ResultChan() {
			if ev.Type != watch.Modified && ev.Type != watch.Added {
				continue
			}
			u, ok := ev.Object.(*unstructured.Unstructured)
			if !ok {
				continue
			}
			cores, _, _ := unstructured.NestedInt64(u.Object, "spec", "executor", "cores")
			mu.Lock()
			if at, ok := sent[u.GetName()]; ok && cores == 4 {
				latencies = append(latencies, time.Since(at))
				delete(sent, u.GetName())
				if len(latencies) == s.changes {
					mu.Unlock()
					return
				}
			}
			mu.Unlock()
		}
	}()
	for i := 0; i < s.changes; i++ {
		name := fmt.Sprintf("p-%04d", i)
		p := &v1alpha1.AnalyticsPipeline{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, p); err != nil {
			t.Fatal(err)
		}
		patch := client.MergeFrom(p.DeepCopy())
		p.Spec.Spark.Executors.Cores = 4
		mu.Lock()
		sent[name] = time.Now()
		mu.Unlock()
		if err := c.Patch(ctx, p, patch); err != nil {
			t.Fatal(err)
		}
		time.Sleep(s.changeEvery)
	}
	select {
	case <-done:
	case <-time.After(10 * time.Minute):
		mu.Lock()
		defer mu.Unlock()
		t.Fatalf("after 10 minutes %d of %d changes had not reached their SparkApplication", len(sent), s.changes)
	}
	slices.Sort(latencies)
	return percentile(latencies, 50), percentile(latencies, 99)
}

// percentile is the nearest-rank percentile of sorted durations.
func percentile(sorted []time.Duration, p int) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := (p*len(sorted) + 99) / 100
	return sorted[max(i, 1)-1]
}

// serverWrites reads the API server's write counts by kind.
func serverWrites(t testing.TB, cfg *rest.Config) map[string]float64 {
	t.Helper()
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	text, err := cs.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return ServerWrites(string(text))
}

func delta(before, after map[string]float64) map[string]float64 {
	out := map[string]float64{}
	for k, v := range after {
		if d := v - before[k]; d != 0 {
			out[k] = d
		}
	}
	return out
}

// perPipeline formats counts divided by n, in a stable order.
func perPipeline(counts map[string]float64, n int) string {
	keys := slices.Sorted(maps.Keys(counts))
	var parts []string
	for _, k := range keys {
		if counts[k] != 0 {
			parts = append(parts, fmt.Sprintf("%s %.2f", k, counts[k]/float64(n)))
		}
	}
	return strings.Join(parts, ", ")
}

// eventsOf lists the events regarding the pipeline name in ns.
func eventsOf(t testing.TB, c client.Client, ns, name string) []string {
	t.Helper()
	list := &eventsv1.EventList{}
	if err := c.List(context.Background(), list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range list.Items {
		if e.Regarding.Name == name {
			n := int32(1)
			if e.Series != nil {
				n = e.Series.Count
			}
			out = append(out, fmt.Sprintf("%s %s %s (%d)", e.Type, e.Reason, e.Action, n))
		}
	}
	slices.Sort(out)
	return out
}
