package ssa

import (
	"context"
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/client-go/rest"
	crcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Even compacted (Compact), the children held as unstructured objects were most of the
// operator's heap: 188 of 304 MB at 1,000 pipelines, each child's spec and status a tree of
// maps (docs/performance.md). Pack, a cache transform, keeps a child's metadata decoded —
// what the informers' indexes, the owner handlers and the label selectors read — and
// everything else (spec, status, and the managedFields Compact left) as one compressed JSON
// text (compress); PackedCache gives the object back whole on every Get and List.

// packedKey holds the compressed JSON of what Pack took out of an object. It is not a field of
// any kind: the objects the cache holds are never sent back (children are written by apply,
// merge patches and deletes only), and PackedCache removes it before anything reads them.
const packedKey = "strata.dev/packed"

// Pack is a cache transform (cache.Options.DefaultTransform, after Compact) for unstructured
// objects: apiVersion, kind and metadata without managedFields stay as they are, the rest goes
// into packedKey. An object holding a floating-point number is left as it is: JSON does not
// tell 1.0 from 1, so a float64 1 would come back an int64 (apimachinery's util/json
// converts integral numbers to int64), and a comparison with the desired object would differ.
// Typed objects pass unchanged.
func Pack(obj any) (any, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok || u.Object[packedKey] != nil {
		return obj, nil
	}
	meta, ok := u.Object["metadata"].(map[string]any)
	if !ok {
		return obj, nil
	}
	rest := map[string]any{}
	for k, v := range u.Object {
		if k != "apiVersion" && k != "kind" && k != "metadata" {
			rest[k] = v
		}
	}
	if mf, ok := meta["managedFields"]; ok {
		rest["metadata"] = map[string]any{"managedFields": mf}
	}
	if len(rest) == 0 || holdsFloat(rest) {
		return obj, nil
	}
	b, err := json.Marshal(rest)
	if err != nil {
		return nil, err
	}
	for k := range rest {
		if k != "metadata" {
			delete(u.Object, k)
		}
	}
	delete(meta, "managedFields")
	u.Object[packedKey] = string(compress(b)) // a string: unstructured's DeepCopy copies no []byte
	return u, nil
}

// Unpack gives a packed object back as it was before Pack, in place; an object not packed is
// left as it is.
func Unpack(u *unstructured.Unstructured) error {
	packed, ok := u.Object[packedKey].(string)
	if !ok {
		return nil
	}
	b, err := decompress([]byte(packed))
	if err != nil {
		return fmt.Errorf("unpacking %s %s/%s: %w", u.GetKind(), u.GetNamespace(), u.GetName(), err)
	}
	rest := map[string]any{}
	if err := utiljson.Unmarshal(b, &rest); err != nil {
		return fmt.Errorf("unpacking %s %s/%s: %w", u.GetKind(), u.GetNamespace(), u.GetName(), err)
	}
	delete(u.Object, packedKey)
	if m, ok := rest["metadata"].(map[string]any); ok {
		if meta, ok := u.Object["metadata"].(map[string]any); ok {
			meta["managedFields"] = m["managedFields"]
		}
		delete(rest, "metadata")
	}
	for k, v := range rest {
		u.Object[k] = v
	}
	return nil
}

// holdsFloat says whether v holds a float64 anywhere.
func holdsFloat(v any) bool {
	switch x := v.(type) {
	case float64, float32:
		return true
	case map[string]any:
		for _, e := range x {
			if holdsFloat(e) {
				return true
			}
		}
	case []any:
		for _, e := range x {
			if holdsFloat(e) {
				return true
			}
		}
	}
	return false
}

// PackedCache is a cache whose unstructured objects may be packed (Pack): Get and List unpack
// what they return, on the copy the cache made for the caller (controller-runtime's
// CacheReader deep-copies every object it returns, pkg/cache/internal/cache_reader.go), so
// the cached object stays packed. Informer event handlers still see the packed objects: their
// metadata, all that handlers and indexes of children read (owner references, labels).
type PackedCache struct {
	crcache.Cache
}

// NewPackedCache is a cache.NewCacheFunc: next's cache (cache.New when nil), unpacking.
func NewPackedCache(next crcache.NewCacheFunc) crcache.NewCacheFunc {
	if next == nil {
		next = crcache.New
	}
	return func(config *rest.Config, opts crcache.Options) (crcache.Cache, error) {
		c, err := next(config, opts)
		if err != nil {
			return nil, err
		}
		return PackedCache{Cache: c}, nil
	}
}

// Get reads obj from the cache, unpacked.
func (c PackedCache) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if err := c.Cache.Get(ctx, key, obj, opts...); err != nil {
		return err
	}
	if u, ok := obj.(*unstructured.Unstructured); ok {
		if shared((&client.GetOptions{}).ApplyOptions(opts).UnsafeDisableDeepCopy) {
			u.Object = runtime.DeepCopyJSON(u.Object)
		}
		return Unpack(u)
	}
	return nil
}

// shared says whether a read asked for the cache's own objects (client.UnsafeDisableDeepCopy):
// those are unpacked on a copy, or the cache would hold them unpacked and race with its other
// readers. (The manager's cache is not set to disable deep copies by default: ManagerOptions.)
func shared(unsafe *bool) bool { return unsafe != nil && *unsafe }

// List reads list from the cache, every item unpacked.
func (c PackedCache) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	if err := c.Cache.List(ctx, list, opts...); err != nil {
		return err
	}
	if ul, ok := list.(*unstructured.UnstructuredList); ok {
		copied := !shared((&client.ListOptions{}).ApplyOptions(opts).UnsafeDisableDeepCopy)
		for i := range ul.Items {
			if !copied {
				ul.Items[i].Object = runtime.DeepCopyJSON(ul.Items[i].Object)
			}
			if err := Unpack(&ul.Items[i]); err != nil {
				return err
			}
		}
	}
	return nil
}
