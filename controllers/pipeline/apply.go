package pipeline

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/internal/desired"
	"github.com/strata-dev/strata/internal/ssa"
)

// pipelineScope is the ssa scope of a pipeline's children: forgotten when it is deleted.
func pipelineScope(key client.ObjectKey) string { return ssa.Scope("AnalyticsPipeline", key) }

// children lists the objects of one kind that the pipeline controls, from the cache.
func children(ctx context.Context, c client.Client, gvk schema.GroupVersionKind, p *v1alpha1.AnalyticsPipeline, watches *childWatches) ([]*unstructured.Unstructured, error) {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	opts := []client.ListOption{client.InNamespace(p.Namespace), client.MatchingLabels(desired.SelectorLabels(p))}
	if watches.indexed(gvk) {
		// The cache answers from its index: this pipeline's children only (watches.go).
		opts = append(opts, client.MatchingFields{controllerIndex: string(p.UID)})
	}
	if err := c.List(ctx, list, opts...); err != nil {
		return nil, err
	}
	var out []*unstructured.Unstructured
	for i := range list.Items {
		if controlledBy(&list.Items[i], p.UID) {
			out = append(out, &list.Items[i])
		}
	}
	return out, nil
}

func controlledBy(o metav1.Object, uid types.UID) bool {
	ref := metav1.GetControllerOf(o)
	return ref != nil && ref.UID == uid
}

// prune deletes a child the plan no longer wants. Only children the pipeline controls are
// given to it, so that nothing a user or another operator made is touched.
func prune(ctx context.Context, c client.Client, applier *ssa.Applier, o *unstructured.Unstructured) error {
	if o.GetDeletionTimestamp() != nil {
		return nil
	}
	err := c.Delete(ctx, o, client.Preconditions{UID: ptrTo(o.GetUID())}, client.PropagationPolicy(metav1.DeletePropagationBackground))
	switch {
	case apierrors.IsConflict(err):
		return nil // replaced meanwhile: not the object we meant to delete
	case client.IgnoreNotFound(err) != nil:
		return fmt.Errorf("deleting %s %s: %w", o.GetKind(), o.GetName(), err)
	}
	applier.Forget(ssa.KeyOf(o))
	return nil
}

// childError is a failure to apply or prune one child.
type childError struct {
	gvk schema.GroupVersionKind
	err error
}

func (e *childError) Error() string { return e.err.Error() }
func (e *childError) Unwrap() error { return e.err }

// condition names the pipeline condition that reports the failure.
func (e *childError) condition() string {
	if k, ok := childKind(e.gvk); ok {
		return k.Condition
	}
	return v1alpha1.ConditionReady
}

func ptrTo[T any](v T) *T { return &v }
