package ssa

import (
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/lru"

	"github.com/strata-dev/strata/internal/intern"
)

// Key identifies an applied object.
type Key struct {
	GVK       schema.GroupVersionKind
	Namespace string
	Name      string
}

// KeyOf is the identity of u.
func KeyOf(u *unstructured.Unstructured) Key {
	return Key{GVK: u.GroupVersionKind(), Namespace: u.GetNamespace(), Name: u.GetName()}
}

// shared is k holding the shared copy of each of its strings (internal/intern): a key is
// built from a desired object, new on every reconcile, and the cache keeps one per child, each
// with its own API group, version, kind and namespace otherwise.
func (k Key) shared() Key {
	return Key{GVK: schema.GroupVersionKind{Group: intern.String(k.GVK.Group), Version: intern.String(k.GVK.Version),
		Kind: intern.String(k.GVK.Kind)}, Namespace: intern.String(k.Namespace), Name: intern.String(k.Name)}
}

// applied is what the cache remembers of an object: the hash of the request last applied, the
// resourceVersion the server answered with, and the owner (scope) the object was applied for.
type applied struct {
	scope string
	// hash is the request's SHA-256, compared for equality only: kept as its 32 bytes, not as
	// 64 hex characters in a string.
	hash            [32]byte
	resourceVersion string
	// raw is what was applied, as JSON compressed (compress): what another manager's change of a
	// field is measured against (Changes), whatever Strata applies next. Read back (decompress)
	// only by drift detection, once per child that another manager changed; the JSON of
	// Strata's children compresses to a tenth or less of its 1–9 kB with the dictionary
	// (docs/performance.md), and 16,384 entries are remembered.
	raw []byte
}

// cache is a size-bounded LRU of applied objects with an index by scope, so that the entries of
// a deleted owner can be dropped at once. The LRU calls its eviction function while its own
// lock is held, from within Add and Remove; every call into it happens under mu, so the
// function may update the index without locking.
type cache struct {
	mu      sync.Mutex
	lru     *lru.Cache
	byScope map[string]map[Key]bool
}

func newCache(size int) *cache {
	c := &cache{byScope: map[string]map[Key]bool{}}
	c.lru = lru.NewWithEvictionFunc(size, func(k lru.Key, v any) { c.unindex(k.(Key), v.(applied).scope) })
	return c
}

func (c *cache) get(k Key) (applied, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.lru.Get(k)
	if !ok {
		return applied{}, false
	}
	return v.(applied), true
}

func (c *cache) add(k Key, a applied) {
	k = k.shared()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lru.Remove(k) // unindexes an entry of another scope
	c.lru.Add(k, a)
	if c.byScope[a.scope] == nil {
		c.byScope[a.scope] = map[Key]bool{}
	}
	c.byScope[a.scope][k] = true
}

func (c *cache) remove(k Key) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lru.Remove(k)
}

// removeScope drops every entry applied for scope.
func (c *cache) removeScope(scope string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k := range c.byScope[scope] {
		c.lru.Remove(k)
	}
	delete(c.byScope, scope)
}

func (c *cache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.Len()
}

// unindex runs under mu (see cache).
func (c *cache) unindex(k Key, scope string) {
	delete(c.byScope[scope], k)
	if len(c.byScope[scope]) == 0 {
		delete(c.byScope, scope)
	}
}
