package controllers_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/internal/desired"
)

// prometheusBinary is the pinned Prometheus: $STRATA_PROMETHEUS, else what hack/tools.sh builds
// from the Go module proxy (minutes the first time, then cached under bin/).
func prometheusBinary(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("STRATA_PROMETHEUS"); p != "" {
		return p
	}
	out, err := exec.Command("../hack/tools.sh", "path", "prometheus").Output()
	if err != nil {
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("Prometheus is needed for this test and hack/tools.sh could not build it (%v):\n%s\n"+
			"build it with `hack/tools.sh path prometheus`, or set STRATA_PROMETHEUS to a prometheus binary", err, stderr)
	}
	return strings.TrimSpace(string(out))
}

// syntheticExporter serves what kube-prometheus-stack would scrape from a pipeline's brokers
// (cAdvisor's network counters, the JMX exporter's under-replicated partitions) and from the
// Elasticsearch exporter, with the labels the default queries select on. Counters grow at the
// rates the test sets.
type syntheticExporter struct {
	srv  *httptest.Server
	stop chan struct{}

	mu                 sync.Mutex
	sendBps, indexRate float64
	urp                float64
}

func newSyntheticExporter(t *testing.T, p *v1alpha1.AnalyticsPipeline, brokers int) *syntheticExporter {
	t.Helper()
	reg := prometheus.NewRegistry()
	labels := []string{"namespace", "pod"}
	tx := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "container_network_transmit_bytes_total", Help: "cAdvisor"}, labels)
	rx := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "container_network_receive_bytes_total", Help: "cAdvisor"}, labels)
	urp := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "kafka_server_replicamanager_underreplicatedpartitions", Help: "JMX"}, labels)
	idx := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "elasticsearch_indices_indexing_index_total", Help: "ES"},
		[]string{"namespace", "cluster", "name"})
	reg.MustRegister(tx, rx, urp, idx)

	// The names, taken now: the test goes on updating p while the exporter runs.
	ns, name, brokerPrefix := p.Namespace, p.Name, desired.BrokerPodPrefix(p)
	e := &syntheticExporter{stop: make(chan struct{})}
	e.srv = httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{})) // listens on 127.0.0.1
	go func() {
		const tick = 100 * time.Millisecond
		tk := time.NewTicker(tick)
		defer tk.Stop()
		for {
			select {
			case <-e.stop:
				return
			case <-tk.C:
			}
			e.mu.Lock()
			send, index, under := e.sendBps, e.indexRate, e.urp
			e.mu.Unlock()
			// The traffic spreads evenly over the brokers; they receive 80 % of what they send.
			for i := 0; i < brokers; i++ {
				pod := fmt.Sprintf("%s%d", brokerPrefix, i)
				tx.WithLabelValues(ns, pod).Add(send / float64(brokers) * tick.Seconds())
				rx.WithLabelValues(ns, pod).Add(0.8 * send / float64(brokers) * tick.Seconds())
				urp.WithLabelValues(ns, pod).Set(under / float64(brokers))
			}
			idx.WithLabelValues(ns, name, "data-0").Add(index * tick.Seconds())
		}
	}()
	t.Cleanup(func() { close(e.stop); e.srv.Close() })
	return e
}

func (e *syntheticExporter) set(sendBps, underReplicated float64) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.sendBps, e.urp, e.indexRate = sendBps, underReplicated, 1000
}

// startPrometheus runs Prometheus on 127.0.0.1 scraping the exporter every second, and kills
// it when the test ends.
func startPrometheus(t *testing.T, target string) string {
	t.Helper()
	bin := prometheusBinary(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	dir := t.TempDir()
	config := fmt.Sprintf("global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"+
		"scrape_configs:\n  - job_name: synthetic\n    static_configs:\n      - targets: [%q]\n", target)
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	logFile, err := os.Create(filepath.Join(dir, "prometheus.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--config.file="+filepath.Join(dir, "prometheus.yml"),
		"--storage.tsdb.path="+filepath.Join(dir, "data"), "--web.listen-address="+addr,
		"--storage.tsdb.retention.time=1h")
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		_ = logFile.Close()
		if t.Failed() {
			if log, err := os.ReadFile(logFile.Name()); err == nil {
				t.Logf("prometheus log:\n%s", log)
			}
		}
	})
	url := "http://" + addr
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(url + "/-/ready")
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return url
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("Prometheus at %s not ready after 30s: %v", url, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// waitLong is waitFor with a deadline of its own: the autoscaler's windows take a while.
func waitLong(t *testing.T, d time.Duration, what string, check func() error) {
	t.Helper()
	deadline := time.Now().Add(d)
	var last error
	for time.Now().Before(deadline) {
		if last = check(); last == nil {
			return
		}
		time.Sleep(250 * time.Millisecond)
	}
	t.Fatalf("timed out after %s waiting for %s: %v", d, what, last)
}

// TestAutoscalerWithPrometheus closes the loop with a real Prometheus (the pinned build)
// scraping synthetic broker metrics, and the operator against a real API server: traffic above
// the link budget grows the broker KafkaNodePool; lower traffic shrinks it, only after the
// stabilisation window, and not while partitions are under-replicated.
func TestAutoscalerWithPrometheus(t *testing.T) {
	o := startOperator(t)
	ns, _ := o.createSamples(t)
	ctx := context.Background()
	p := &v1alpha1.AnalyticsPipeline{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "sensors"}}
	waitPlanned(t, o.c, p, func() error { return nil })

	exp := newSyntheticExporter(t, p, 3)
	exp.set(200e6, 0) // 3 brokers send 67 MB/s each: within 80 % of 112.5 MB/s
	url := startPrometheus(t, strings.TrimPrefix(exp.srv.URL, "http://"))
	enableAutoscaling(t, o.c, p, url)

	replicas := func() int64 { return brokerReplicas(t, o.c, p) }
	waitLong(t, 60*time.Second, "Autoscaling=True", func() error {
		if err := o.c.Get(ctx, client.ObjectKeyFromObject(p), p); err != nil {
			return err
		}
		return condition(p.Status.Conditions, v1alpha1.ConditionAutoscaling, metav1.ConditionTrue, v1alpha1.ReasonAutoscalingActive)
	})
	if got := replicas(); got != 3 {
		t.Fatalf("broker pool has %d replicas at 200 MB/s, want 3", got)
	}

	// Above the link budget: 400 MB/s needs 5 brokers at 90 MB/s.
	exp.set(400e6, 0)
	waitLong(t, 60*time.Second, "5 brokers", func() error {
		if got := replicas(); got != 5 {
			return fmt.Errorf("%d replicas", got)
		}
		return nil
	})

	// Lower traffic while partitions are under-replicated: the scale-down is held back.
	lowered := time.Now()
	exp.set(100e6, 2)
	waitLong(t, 90*time.Second, "a held-back scale-down", func() error {
		if err := o.c.Get(ctx, client.ObjectKeyFromObject(p), p); err != nil {
			return err
		}
		d := p.Status.Autoscaling.LastDecision
		if d == nil || d.Action != v1alpha1.ActionBlocked || d.Reason != "UnderReplicatedPartitions" {
			return fmt.Errorf("last decision %+v", d)
		}
		return nil
	})
	if got := replicas(); got != 5 {
		t.Fatalf("brokers left while partitions were under-replicated: %d replicas", got)
	}
	if held := time.Since(lowered); held < 20*time.Second {
		t.Errorf("a scale-down was due %s after the traffic fell, before the 20s stabilisation window", held)
	}

	// Replicated again: the brokers the lower traffic does not need leave, down to the plan's 3.
	exp.set(100e6, 0)
	waitLong(t, 60*time.Second, "3 brokers", func() error {
		if got := replicas(); got != 3 {
			return fmt.Errorf("%d replicas", got)
		}
		return nil
	})
	if err := o.c.Get(ctx, client.ObjectKeyFromObject(p), p); err != nil {
		t.Fatal(err)
	}
	if d := p.Status.Autoscaling.LastDecision; d == nil || d.Action != v1alpha1.ActionScaleDown || d.Reason != "LinkUnderused" {
		t.Errorf("last decision %+v, want a ScaleDown (LinkUnderused)", d)
	}
}
