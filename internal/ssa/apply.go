package ssa

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// DefaultCacheSize is how many objects an Applier remembers. A pipeline has about 14 children,
// a local tier one volume per node and path: 16,384 entries keep 1,000 pipelines warm (4,096
// held 290 of them: every other reconcile compared its children with the live objects). An
// entry holds the applied object as its JSON request compressed (compress), a few hundred bytes
// of a child's 1–9 kB (docs/performance.md).
// An object that fell out costs one comparison with the live object, not a request.
const DefaultCacheSize = 16384

// Applier server-side applies objects as one field manager, taking over fields another
// manager set, and sends nothing when the object is known to be applied already.
type Applier struct {
	client  client.Client
	manager string
	cache   *cache
}

// New returns an Applier that writes through c as field manager manager and remembers at most
// size objects.
func New(c client.Client, manager string, size int) *Applier {
	return &Applier{client: c, manager: manager, cache: newCache(size)}
}

// Scope names the owner objects are applied for, so that Forget can drop them all: the owner's
// kind and its namespace/name.
func Scope(kind string, key client.ObjectKey) string { return kind + " " + key.String() }

// Apply applies obj for scope unless it is known to be applied, and returns the object as the
// server now has it: the answer to the apply, or current when nothing was sent. current is the
// object as the cache has it (nil when it does not exist).
func (a *Applier) Apply(ctx context.Context, scope string, obj, current *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	b, err := json.Marshal(obj.Object)
	if err != nil {
		return nil, err
	}
	hash := sha256.Sum256(b)
	key := KeyOf(obj)

	if current != nil {
		last, known := a.cache.get(key)
		if known && last.hash == hash && last.resourceVersion == current.GetResourceVersion() {
			// The same request as remembered: its compressed bytes are the ones kept already.
			a.cache.add(key, applied{scope: scope, hash: hash, resourceVersion: last.resourceVersion, raw: last.raw})
			return current, nil
		}
		if !known && upToDate(current, obj, a.manager) {
			a.cache.add(key, applied{scope: scope, hash: hash, resourceVersion: current.GetResourceVersion(), raw: compress(b)})
			return current, nil
		}
	}

	answer := obj.DeepCopy()
	if err := a.client.Apply(ctx, client.ApplyConfigurationFromUnstructured(answer),
		client.FieldOwner(a.manager), client.ForceOwnership); err != nil {
		return nil, fmt.Errorf("applying %s %s: %w", obj.GetKind(), obj.GetName(), err)
	}
	a.cache.add(key, applied{scope: scope, hash: hash, resourceVersion: answer.GetResourceVersion(), raw: compress(b)})
	return answer, nil
}

// Applied is what this Applier last applied of key (or found applied), if it remembers: not
// after a restart, nor once the entry fell out of the cache.
func (a *Applier) Applied(key Key) (*unstructured.Unstructured, bool) {
	last, ok := a.cache.get(key)
	if !ok || last.raw == nil {
		return nil, false
	}
	raw, err := decompress(last.raw)
	if err != nil {
		return nil, false
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(raw); err != nil {
		return nil, false
	}
	return u, true
}

// ApplyTyped applies a typed object (as internal/desired builds them) through Apply. Only the
// fields the builder sets are sent: no status, no creation timestamp. current is the object as
// the cache has it, nil when it does not exist.
func (a *Applier) ApplyTyped(ctx context.Context, scope string, obj, current client.Object) error {
	want, err := toUnstructured(obj)
	if err != nil {
		return err
	}
	delete(want.Object, "status")
	unstructured.RemoveNestedField(want.Object, "metadata", "creationTimestamp")
	var live *unstructured.Unstructured
	if current != nil {
		if live, err = toUnstructured(current); err != nil {
			return err
		}
	}
	_, err = a.Apply(ctx, scope, want, live)
	return err
}

func toUnstructured(obj client.Object) (*unstructured.Unstructured, error) {
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{Object: content}
	if u.GetKind() == "" {
		return nil, fmt.Errorf("applying %T %s: no apiVersion and kind set", obj, obj.GetName())
	}
	return u, nil
}

// Forget drops what the Applier knows of an object, after it was deleted.
func (a *Applier) Forget(key Key) { a.cache.remove(key) }

// ForgetScope drops what the Applier knows of every object applied for scope: its owner was
// deleted.
func (a *Applier) ForgetScope(scope string) { a.cache.removeScope(scope) }
