package main

import (
	"testing"

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
	// The pipeline metrics are on reg only because registerMetrics put them there.
	rec.Observe(&v1alpha1.AnalyticsPipeline{ObjectMeta: metav1.ObjectMeta{Namespace: "kept", Name: "sensors"}})
	if !gathered(t, reg, pipelinemetrics.Info) {
		t.Errorf("%s is not served after registerMetrics", pipelinemetrics.Info)
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
