package pipeline

import (
	"context"
	"encoding/json"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/controllers/internal/setup"
	"github.com/strata-dev/strata/controllers/internal/status"
	"github.com/strata-dev/strata/internal/desired"
	"github.com/strata-dev/strata/internal/plan"
	"github.com/strata-dev/strata/internal/ssa"
	"github.com/strata-dev/strata/internal/testutil/gen"
)

// TestChildrenModifiedStep: the step on the children desired.All builds for the sample, by a
// manager that remembers no apply (just restarted), with a status plan that went through the API
// server (JSON): a broker pool whose replicas another manager changed is reported taken back; a
// descriptive label is dropped from the apply and reported left; with a new plan (Strata's own
// next step) nothing is reported taken back. (What a manager that remembers its applies reports:
// TestChildrenModifiedByAnotherManager.)
func TestChildrenModifiedStep(t *testing.T) {
	p := gen.Pipeline()
	p.Generation, p.Status.ObservedGeneration = 3, 3
	pl, err := plan.Fresh(p, gen.APITiers())
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(pl)
	stored := &v1alpha1.Plan{}
	if err := json.Unmarshal(b, stored); err != nil {
		t.Fatal(err)
	}
	run := func(p *v1alpha1.AnalyticsPipeline, pl v1alpha1.Plan) (*scope, *unstructured.Unstructured) {
		s := &scope{pipeline: p, plan: pl, planned: true, observed: observed{}}
		s.conds = status.Conditions{List: &p.Status.Conditions, Generation: p.Generation}
		var es *unstructured.Unstructured
		for _, obj := range desired.All(desired.Inputs{Pipeline: p, Plan: pl, Tiers: gen.APITiers()}) {
			live := &unstructured.Unstructured{}
			raw, _ := json.Marshal(obj.Object)
			_ = live.UnmarshalJSON(raw)
			switch {
			case obj.GetKind() == "KafkaNodePool" && obj.GetName() == desired.BrokerPoolName(p):
				_ = unstructured.SetNestedField(live.Object, int64(pl.Brokers+4), "spec", "replicas")
				live.SetManagedFields([]metav1.ManagedFieldsEntry{{Manager: "kubectl-edit", Operation: metav1.ManagedFieldsOperationUpdate,
					FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:spec":{"f:replicas":{}}}`)}}})
			case obj.GetKind() == "Elasticsearch":
				labels := live.GetLabels()
				labels[desired.LabelComponent] = "by-hand"
				live.SetLabels(labels)
				live.SetManagedFields([]metav1.ManagedFieldsEntry{{Manager: "kubectl-edit", Operation: metav1.ManagedFieldsOperationUpdate,
					FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:metadata":{"f:labels":{"f:app.kubernetes.io/component":{}}}}`)}}})
				es = obj
			}
			s.observed[ssa.KeyOf(obj)] = live
			s.desired = append(s.desired, obj)
		}
		if err := (&Reconciler{Applier: ssa.New(nil, setup.FieldOwner, 16)}).childrenModified(context.Background(), s); err != nil {
			t.Fatal(err)
		}
		return s, es
	}

	p.Status.Plan = stored
	s, es := run(p, pl)
	c := findCondition(*s.conds.List, v1alpha1.ConditionChildrenAsApplied)
	if c == nil || c.Status != metav1.ConditionFalse || c.Reason != v1alpha1.ReasonTakenBack {
		t.Fatalf("ChildrenAsApplied %+v, want False TakenBack", c)
	}
	t.Log(c.Message)
	if _, ok := es.GetLabels()[desired.LabelComponent]; ok {
		t.Error("the component label another manager holds is still in the Elasticsearch Strata applies")
	}

	// Strata's own next step: a plan other than the status'.
	q := p.DeepCopy()
	q.Status.Conditions = nil
	next := pl
	next.Brokers++
	s, _ = run(q, next)
	if c := findCondition(*s.conds.List, v1alpha1.ConditionChildrenAsApplied); c == nil || c.Reason != v1alpha1.ReasonLeftToManager {
		t.Errorf("with a new plan: ChildrenAsApplied %+v, want True LeftToManager (the label) and no TakenBack", c)
	}
}

func findCondition(list []metav1.Condition, t string) *metav1.Condition {
	for i := range list {
		if list[i].Type == t {
			return &list[i]
		}
	}
	return nil
}
