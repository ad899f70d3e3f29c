package controllers

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"reflect"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/internal/desired"
)

// applier server-side applies desired objects with one field owner, and skips the request when
// it would change nothing. Server-side apply of an unchanged object is a no-op for the API
// server, but still a request; at a thousand pipelines a resync would send thousands. As in
// Cluster API's ssa patch helper, the applier remembers, per object, the hash of what it last
// applied and the resourceVersion the server answered with: if both still match, nobody (us or
// anyone else) has changed the object since, and the apply is skipped. After a restart it
// remembers nothing, so it compares instead: when the live object already holds every field of
// the desired one with the same value, there is nothing to apply.
type applier struct {
	client client.Client
	mu     sync.Mutex
	// applied maps an object's identity to the last (desired hash, resourceVersion) pair.
	applied map[objectKey]appliedState
}

type objectKey struct {
	gvk       schema.GroupVersionKind
	namespace string
	name      string
}

type appliedState struct {
	hash            string
	resourceVersion string
}

func newApplier(c client.Client) *applier {
	return &applier{client: c, applied: map[objectKey]appliedState{}}
}

func keyOf(u *unstructured.Unstructured) objectKey {
	return objectKey{gvk: u.GroupVersionKind(), namespace: u.GetNamespace(), name: u.GetName()}
}

// apply applies obj unless it is known to be applied already, and returns the object as the
// server now has it: the answer to the apply, or current when nothing was sent. current is the
// object as the cache has it (nil when it does not exist).
func (a *applier) apply(ctx context.Context, obj, current *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	b, err := json.Marshal(obj.Object)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(b)
	hash := hex.EncodeToString(sum[:])
	key := keyOf(obj)

	a.mu.Lock()
	last, known := a.applied[key]
	a.mu.Unlock()
	if current != nil && ((known && last.hash == hash && last.resourceVersion == current.GetResourceVersion()) ||
		(!known && contains(current.Object, normalize(obj.Object)))) {
		a.remember(key, hash, current.GetResourceVersion())
		return current, nil
	}

	applied := obj.DeepCopy()
	if err := a.client.Apply(ctx, client.ApplyConfigurationFromUnstructured(applied),
		client.FieldOwner(FieldOwner), client.ForceOwnership); err != nil {
		return nil, fmt.Errorf("applying %s %s: %w", obj.GetKind(), obj.GetName(), err)
	}
	a.remember(key, hash, applied.GetResourceVersion())
	return applied, nil
}

func (a *applier) remember(key objectKey, hash, resourceVersion string) {
	a.mu.Lock()
	a.applied[key] = appliedState{hash: hash, resourceVersion: resourceVersion}
	a.mu.Unlock()
}

// contains reports whether live holds every field of want with an equal value. Lists must match
// element by element: server-side apply replaces atomic lists and merges keyed ones, and either
// way a list of another length is a change.
func contains(live, want any) bool {
	switch w := want.(type) {
	case map[string]any:
		l, ok := live.(map[string]any)
		if !ok {
			return false
		}
		for k, v := range w {
			lv, ok := l[k]
			if !ok || !contains(lv, v) {
				return false
			}
		}
		return true
	case []any:
		l, ok := live.([]any)
		if !ok || len(l) != len(w) {
			return false
		}
		for i := range w {
			if !contains(l[i], w[i]) {
				return false
			}
		}
		return true
	default:
		return reflect.DeepEqual(live, want)
	}
}

// normalize gives a built object the types a decoded one has (int64 and float64 numbers,
// []any lists), by a JSON round trip, so that contains compares like with like.
func normalize(obj map[string]any) map[string]any {
	b, err := json.Marshal(obj)
	if err != nil {
		return obj
	}
	out := &unstructured.Unstructured{}
	if err := out.UnmarshalJSON(b); err != nil {
		return obj
	}
	return out.Object
}

// forget drops what the applier knows of an object, after it was deleted.
func (a *applier) forget(u *unstructured.Unstructured) {
	a.mu.Lock()
	delete(a.applied, keyOf(u))
	a.mu.Unlock()
}

// children lists the objects of one kind that the pipeline controls, from the cache.
func children(ctx context.Context, c client.Client, gvk schema.GroupVersionKind, p *v1alpha1.AnalyticsPipeline) ([]*unstructured.Unstructured, error) {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	if err := c.List(ctx, list, client.InNamespace(p.Namespace), client.MatchingLabels(desired.SelectorLabels(p))); err != nil {
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

// prune deletes the children of a kind the plan no longer wants: only those the pipeline
// controls, so that nothing a user or another operator made is touched.
func (a *applier) prune(ctx context.Context, existing []*unstructured.Unstructured, wanted map[objectKey]bool) (int, error) {
	deleted := 0
	for _, o := range existing {
		if wanted[keyOf(o)] || o.GetDeletionTimestamp() != nil {
			continue
		}
		if err := a.client.Delete(ctx, o, client.Preconditions{UID: ptrTo(o.GetUID())},
			client.PropagationPolicy(metav1.DeletePropagationBackground)); client.IgnoreNotFound(err) != nil {
			if apierrors.IsConflict(err) {
				continue // replaced meanwhile: not the object we meant to delete
			}
			return deleted, fmt.Errorf("deleting %s %s: %w", o.GetKind(), o.GetName(), err)
		}
		a.forget(o)
		deleted++
	}
	return deleted, nil
}

func ptrTo[T any](v T) *T { return &v }
