package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"k8s.io/client-go/rest"

	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/strata-dev/strata/api/v1alpha1"
	autoscaleprom "github.com/strata-dev/strata/internal/autoscale/prometheus"
	pipelinemetrics "github.com/strata-dev/strata/internal/metrics"
)

// TestRegisterMetrics: the manager's registration serves the autoscaler's decisions and a
// deleted pipeline's decisions go with its other series, the other pipelines' stay.
func TestRegisterMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	rec := pipelinemetrics.NewUnregistered()
	if err := registerMetrics(reg, rec); err != nil {
		t.Fatal(err)
	}
	d := v1alpha1.AutoscalingDecision{Resource: "Brokers", Action: "ScaleUp", Reason: "LinkSaturated"}
	autoscaleprom.Count("gone", "sensors", d)
	autoscaleprom.Count("kept", "sensors", d)
	rec.Forget("gone", "sensors")
	left := map[string]bool{}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "strata_autoscaler_decisions_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "namespace" {
					left[l.GetValue()] = true
				}
			}
		}
	}
	if left["gone"] || !left["kept"] {
		t.Errorf("decision series left for namespaces %v, want only kept", left)
	}
	if err := registerMetrics(reg, rec); err == nil {
		t.Error("a second registration on the same registry was accepted: the counter would be served twice")
	}
	// The pipeline metrics are not on the registry: the endpoint writes them (metricsFilter).
	rec.Observe(&v1alpha1.AnalyticsPipeline{ObjectMeta: metav1.ObjectMeta{Namespace: "kept", Name: "sensors"}})
	if gathered(t, reg, pipelinemetrics.Info) {
		t.Errorf("%s is on the registry: the endpoint would serve it twice", pipelinemetrics.Info)
	}
}

// TestMetricsFilterServesThePipelineMetrics: the metrics endpoint, as controller-runtime builds
// it around the filter, serves the registry's metrics and the pipeline metrics after them.
func TestMetricsFilterServesThePipelineMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	rec := pipelinemetrics.NewUnregistered()
	if err := registerMetrics(reg, rec); err != nil {
		t.Fatal(err)
	}
	autoscaleprom.Count("ns", "sensors", v1alpha1.AutoscalingDecision{Resource: "Brokers", Action: "ScaleUp", Reason: "LinkSaturated"})
	rec.Observe(&v1alpha1.AnalyticsPipeline{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "sensors"}})
	filter, err := metricsFilter(false, rec)(&rest.Config{}, http.DefaultClient)
	if err != nil {
		t.Fatal(err)
	}
	h, err := filter(logr.Discard(), promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	if err != nil {
		t.Fatal(err)
	}
	rr := httptest.NewRecorder()
	h.ServeHTTP(rr, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	body := rr.Body.String()
	for _, want := range []string{`strata_autoscaler_decisions_total{`, pipelinemetrics.Info + `{`} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics does not serve %s:\n%s", want, body)
		}
	}
}

// TestNothingRegisteredAtLoad: importing internal/metrics (as this binary does) puts nothing on
// controller-runtime's registry; only registerMetrics does.
func TestNothingRegisteredAtLoad(t *testing.T) {
	pipelinemetrics.Observe(&v1alpha1.AnalyticsPipeline{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "sensors"}})
	defer pipelinemetrics.Forget("ns", "sensors")
	if gathered(t, crmetrics.Registry, pipelinemetrics.Info) {
		t.Errorf("%s is on controller-runtime's registry before registerMetrics ran", pipelinemetrics.Info)
	}
}

// gathered reports whether reg serves a series of the metric name.
func gathered(t *testing.T, reg prometheus.Gatherer, name string) bool {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name && len(mf.GetMetric()) > 0 {
			return true
		}
	}
	return false
}
