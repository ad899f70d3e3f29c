package autoscaling

import (
	"context"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/controllers/internal/status"
)

// AutoscalingFieldOwner is the field manager of what the autoscaling controller writes: the
// pipeline's status.autoscaling and its Autoscaling condition. The pipeline reconciler writes
// the rest of the status under controllers.FieldOwner; each owns its own fields, as ECK's autoscaling
// controller owns the autoscaling status it persists (elastic/cloud-on-k8s v3.5.0,
// pkg/controller/autoscaling/elasticsearch/status).
const AutoscalingFieldOwner = "strata-autoscaling"

// verdict is what one autoscaling reconcile has to say: the status.autoscaling to keep (the
// decision's, or the one before when none was made) and the Autoscaling condition.
type verdict struct {
	status  *v1alpha1.AutoscalingStatus
	cond    metav1.ConditionStatus
	reason  string
	message string
}

// writeVerdict writes the verdict to the pipeline's status with server-side apply, under
// AutoscalingFieldOwner, and nothing when the status already says it. The apply carries the
// resourceVersion the decision was made from: if the pipeline changed since (the cache was
// behind this controller's own previous write, or the pipeline reconciler wrote a new plan),
// the API server answers Conflict and the reading is made again from the newer pipeline, so a
// decision is never made twice or from older windows.
func (r *Reconciler) writeVerdict(ctx context.Context, p *v1alpha1.AnalyticsPipeline, v verdict) error {
	conds := slices.Clone(p.Status.Conditions)
	(status.Conditions{List: &conds, Generation: p.Generation}).Set(v1alpha1.ConditionAutoscaling, v.cond, v.reason, v.message)
	cond := meta.FindStatusCondition(conds, v1alpha1.ConditionAutoscaling)
	if equality.Semantic.DeepEqual(p.Status.Autoscaling, v.status) &&
		equality.Semantic.DeepEqual(meta.FindStatusCondition(p.Status.Conditions, v1alpha1.ConditionAutoscaling), cond) {
		return nil
	}
	u, err := verdictObject(p, v.status, *cond)
	if err != nil {
		return err
	}
	if err := r.Client.Status().Apply(ctx, client.ApplyConfigurationFromUnstructured(u),
		client.FieldOwner(AutoscalingFieldOwner), client.ForceOwnership); err != nil {
		return err
	}
	before := []metav1.Condition{}
	if old := meta.FindStatusCondition(p.Status.Conditions, v1alpha1.ConditionAutoscaling); old != nil {
		before = append(before, *old)
	}
	status.AnnounceTransitions(r.Recorder, p, before, []metav1.Condition{*cond})
	return nil
}

// verdictObject is the apply configuration: the pipeline's identity, the resourceVersion read,
// status.autoscaling (left out when there is none yet) and the one condition. Conditions are a
// list keyed by type (api/v1alpha1), so applying one leaves the pipeline reconciler's alone.
func verdictObject(p *v1alpha1.AnalyticsPipeline, st *v1alpha1.AutoscalingStatus, cond metav1.Condition) (*unstructured.Unstructured, error) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(v1alpha1.GroupVersion.WithKind("AnalyticsPipeline"))
	u.SetNamespace(p.Namespace)
	u.SetName(p.Name)
	u.SetResourceVersion(p.ResourceVersion)
	c, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&cond)
	if err != nil {
		return nil, fmt.Errorf("encoding the Autoscaling condition: %w", err)
	}
	status := map[string]any{"conditions": []any{c}}
	if st != nil {
		a, err := runtime.DefaultUnstructuredConverter.ToUnstructured(st)
		if err != nil {
			return nil, fmt.Errorf("encoding status.autoscaling: %w", err)
		}
		status["autoscaling"] = a
	}
	u.Object["status"] = status
	return u, nil
}

// planAppeared passes the pipeline update that gives it its first plan: the autoscaling
// controller, which waits for one, reads at once.
var planAppeared = predicate.Funcs{
	UpdateFunc: func(e event.UpdateEvent) bool {
		old, ok1 := e.ObjectOld.(*v1alpha1.AnalyticsPipeline)
		cur, ok2 := e.ObjectNew.(*v1alpha1.AnalyticsPipeline)
		return ok1 && ok2 && old.Status.Plan == nil && cur.Status.Plan != nil
	},
	CreateFunc:  func(event.CreateEvent) bool { return false },
	DeleteFunc:  func(event.DeleteEvent) bool { return false },
	GenericFunc: func(event.GenericEvent) bool { return false },
}
