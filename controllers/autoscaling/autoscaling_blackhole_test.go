package autoscaling_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/controllers"
	"github.com/strata-dev/strata/controllers/internal/envtestutil"
	autoscaleprom "github.com/strata-dev/strata/internal/autoscale/prometheus"
	"github.com/strata-dev/strata/internal/testutil"
)

// blackholeProm accepts connections on loopback and never answers: a Prometheus that hangs,
// until release.
type blackholeProm struct {
	url string
	// open counts the connections held that the client has not closed: a reading that gave up
	// closes its connection.
	open     atomic.Int64
	mu       sync.Mutex
	held     []net.Conn
	released bool
}

// blackhole starts a blackholeProm; it lets go of everything when the test ends, before the
// manager stops (cleanups run last first), so no reading outlives the test.
func blackhole(t *testing.T) *blackholeProm {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	b := &blackholeProm{url: "http://" + l.Addr().String()}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			b.mu.Lock()
			if b.released {
				b.mu.Unlock()
				c.Close()
				continue
			}
			b.held = append(b.held, c)
			b.open.Add(1)
			b.mu.Unlock()
			go func() {
				_, _ = io.Copy(io.Discard, c) // returns when either side closes
				b.open.Add(-1)
			}()
		}
	}()
	t.Cleanup(func() { l.Close(); b.release() })
	return b
}

// release closes every held connection and every later one at once: the readings fail.
func (b *blackholeProm) release() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.released = true
	for _, c := range b.held {
		c.Close()
	}
}

// TestBlackholedPrometheusStallsNoPipeline: five pipelines read a Prometheus that never answers,
// with readings allowed to hang longer than the test waits for anything; a change to another
// pipeline is still planned and applied while every reading hangs, because the readings run on
// the autoscaling controller's workers, not on the pipeline reconciler's. When the readings
// fail, each hanging pipeline reports it (Autoscaling=False, MetricsUnavailable) and the
// manager still plans the next change. Nothing here depends on how fast the machine is: the
// times are logged, not asserted.
func TestBlackholedPrometheusStallsNoPipeline(t *testing.T) {
	access := autoscaleprom.DefaultAccess()
	// Longer than any wait below (waitFor gives up after a minute), so a reading ends only when
	// the blackhole lets go; the blackhole lets go before the manager stops.
	access.QueryTimeout, access.Deadline = 10*time.Minute, 10*time.Minute
	o := envtestutil.StartOperatorWith(t, []controllers.Option{controllers.WithPrometheusAccess(access)})
	prom := blackhole(t)
	var hung []*v1alpha1.AnalyticsPipeline
	for i := 0; i < 5; i++ {
		ns, _ := o.CreateSamples(t)
		p := &v1alpha1.AnalyticsPipeline{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "sensors"}}
		envtestutil.WaitPlanned(t, o.C, p, func() error { return nil })
		enableAutoscaling(t, o.C, p, prom.url)
		hung = append(hung, p)
	}
	ns, _ := o.CreateSamples(t)
	other := &v1alpha1.AnalyticsPipeline{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "sensors"}}
	envtestutil.WaitPlanned(t, o.C, other, func() error { return nil })
	// Every autoscaling worker (four) is stuck in a reading.
	testutil.Eventually(t, 5*time.Minute, "the readings to reach Prometheus", func() error {
		if n := prom.open.Load(); n < 4 {
			return fmt.Errorf("%d connections hang, want 4", n)
		}
		return nil
	})

	start := time.Now()
	envtestutil.UpdateSpec(t, o.C, other, func() { other.Spec.Workload.MessagesPerSecond = 20000 })
	envtestutil.WaitPlanned(t, o.C, other, func() error {
		if other.Status.Plan.Brokers != 5 {
			return fmt.Errorf("plan has %d brokers, want 5", other.Status.Plan.Brokers)
		}
		return nil
	})
	t.Logf("a pipeline's change was planned and applied %s after it, with the readings hanging", time.Since(start))
	// The property, not a time: the plan came while no reading had returned.
	if n := prom.open.Load(); n < 4 {
		t.Errorf("only %d readings still hang after the change was planned: the plan may have waited for them", n)
	}
	for _, p := range hung {
		if err := o.C.Get(context.Background(), client.ObjectKeyFromObject(p), p); err != nil {
			t.Fatal(err)
		}
		if c := envtestutil.Meta(p, v1alpha1.ConditionAutoscaling); c != nil && c.Reason == v1alpha1.ReasonMetricsUnavailable {
			t.Fatalf("%s reports %q while its reading still hangs: the check below would prove nothing", p.Namespace, c.Message)
		}
	}

	// The readings fail: each pipeline says so, and the manager goes on planning.
	start = time.Now()
	prom.release()
	for _, p := range hung {
		testutil.Eventually(t, 5*time.Minute, p.Namespace+" to report its failed reading", func() error {
			if err := o.C.Get(context.Background(), client.ObjectKeyFromObject(p), p); err != nil {
				return err
			}
			c := envtestutil.Meta(p, v1alpha1.ConditionAutoscaling)
			if c == nil || c.Status != metav1.ConditionFalse || c.Reason != v1alpha1.ReasonMetricsUnavailable ||
				!strings.Contains(c.Message, "nothing is scaled") {
				return fmt.Errorf("Autoscaling condition %+v", c)
			}
			return nil
		})
	}
	t.Logf("the five pipelines reported their failed readings %s after Prometheus let go", time.Since(start))
	envtestutil.UpdateSpec(t, o.C, other, func() { other.Spec.Workload.MessagesPerSecond = 10000 })
	envtestutil.WaitPlanned(t, o.C, other, func() error {
		if other.Status.Plan.Brokers == 5 {
			return fmt.Errorf("plan still has 5 brokers")
		}
		return nil
	})
}
