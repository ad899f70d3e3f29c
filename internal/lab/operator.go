package lab

import (
	"errors"
	"net"
	"net/http"
	"testing"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/internal/metrics"
)

// Operator is the operator's metrics endpoint as the manager serves it: controller-runtime's
// registry, on which internal/metrics publishes the pipelines' series (strata_pipeline_*), here
// for the pipelines given. No reconciler runs, so controller-runtime's per-controller series
// (controller_runtime_reconcile_total…) are absent.
type Operator struct {
	Address string
	srv     *http.Server
}

// ServeOperatorMetrics publishes the pipelines (as the reconciler does after each plan) and serves
// /metrics on a loopback port until Stop or the test's end.
func ServeOperatorMetrics(t testing.TB, pipelines ...*v1alpha1.AnalyticsPipeline) *Operator {
	t.Helper()
	for _, p := range pipelines {
		metrics.Observe(p)
		t.Cleanup(func() { metrics.Forget(p.Namespace, p.Name) })
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(crmetrics.Registry, promhttp.HandlerOpts{}))
	o := &Operator{Address: l.Addr().String(), srv: &http.Server{Handler: mux}}
	go func() {
		if err := o.srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
			t.Error(err)
		}
	}()
	t.Cleanup(o.Stop)
	return o
}

// Stop stops serving (the operator's pod gone).
func (o *Operator) Stop() { _ = o.srv.Close() }
