package controllers

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/internal/autoscale"
)

// TestAutoscalerForgetsDeletedPipelines: what the autoscaler keeps per pipeline (its latest
// reading and decision) goes with the pipeline, and a pipeline re-created under the same name
// does not inherit it.
func TestAutoscalerForgetsDeletedPipelines(t *testing.T) {
	a := &Autoscaler{}
	p := &v1alpha1.AnalyticsPipeline{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "sensors", UID: "one"}}
	other := &v1alpha1.AnalyticsPipeline{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "clicks", UID: "two"}}
	d := autoscale.Decision{Status: v1alpha1.AutoscalingStatus{Brokers: 5}}
	a.record(p, outcome{uid: p.UID, decision: &d})
	a.record(other, outcome{uid: other.UID, decision: &d})
	if _, ok := a.outcome(p); !ok {
		t.Fatal("the reading was not kept")
	}
	recreated := p.DeepCopy()
	recreated.UID = "three"
	if _, ok := a.outcome(recreated); ok {
		t.Error("a pipeline re-created under the same name inherits the old one's reading")
	}
	a.Forget(types.NamespacedName{Namespace: "ns", Name: "sensors"})
	if _, ok := a.outcome(p); ok {
		t.Error("the deleted pipeline's reading is still kept")
	}
	if got := a.prior(p); got != nil {
		t.Errorf("the deleted pipeline's decision is still kept: %+v", got)
	}
	if _, ok := a.outcome(other); !ok {
		t.Error("forgetting one pipeline forgot another")
	}
	if len(a.latest) != 1 || len(a.outcomes) != 1 {
		t.Errorf("%d decisions and %d readings kept, want only the other pipeline's", len(a.latest), len(a.outcomes))
	}
}
