package controllers_test

import (
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/controllers"
	autoscaleprom "github.com/strata-dev/strata/internal/autoscale/prometheus"
	"github.com/strata-dev/strata/internal/testutil"
)

// blackhole accepts connections on loopback and never answers: a Prometheus that hangs. It
// returns its URL and the count of connections it holds.
func blackhole(t *testing.T) (string, *atomic.Int64) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var held []net.Conn
	n := &atomic.Int64{}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			held = append(held, c)
			mu.Unlock()
			n.Add(1)
		}
	}()
	t.Cleanup(func() {
		l.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range held {
			c.Close()
		}
	})
	return "http://" + l.Addr().String(), n
}

// TestBlackholedPrometheusStallsNoPipeline: five pipelines read a Prometheus that never answers,
// with readings allowed to hang for 20 s; a change to another pipeline is still planned and
// applied within seconds, because the readings run on the autoscaling controller's workers, not
// on the pipeline reconciler's.
func TestBlackholedPrometheusStallsNoPipeline(t *testing.T) {
	access := autoscaleprom.DefaultAccess()
	// Long enough to hold every autoscaling worker for the whole test, short enough that the
	// manager stops within its 30 s grace period even if a reading ignored cancellation.
	access.QueryTimeout, access.Deadline = 20*time.Second, 20*time.Second
	o := startOperatorWith(t, []controllers.Option{controllers.WithPrometheusAccess(access)})
	url, hanging := blackhole(t)
	for i := 0; i < 5; i++ {
		ns, _ := o.createSamples(t)
		p := &v1alpha1.AnalyticsPipeline{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "sensors"}}
		waitPlanned(t, o.c, p, func() error { return nil })
		enableAutoscaling(t, o.c, p, url)
	}
	ns, _ := o.createSamples(t)
	other := &v1alpha1.AnalyticsPipeline{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "sensors"}}
	waitPlanned(t, o.c, other, func() error { return nil })
	// Every autoscaling worker is stuck in a reading: at least four connections hang.
	testutil.Eventually(t, time.Minute, "the readings to reach Prometheus", func() error {
		if n := hanging.Load(); n < 4 {
			return fmt.Errorf("%d connections hang, want 4", n)
		}
		return nil
	})

	start := time.Now()
	updateSpec(t, o.c, other, func() { other.Spec.Workload.MessagesPerSecond = 20000 })
	waitPlanned(t, o.c, other, func() error {
		if other.Status.Plan.Brokers != 5 {
			return errorf("plan has %d brokers, want 5", other.Status.Plan.Brokers)
		}
		return nil
	})
	took := time.Since(start)
	t.Logf("a pipeline's change was planned and applied %s after it, with 5 readings hanging", took)
	if took > 10*time.Second {
		t.Errorf("planning a change took %s while other pipelines' Prometheus hangs", took)
	}
}
