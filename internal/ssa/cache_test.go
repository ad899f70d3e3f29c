package ssa

import (
	"fmt"
	"testing"
)

// TestCacheBoundedAndForgotten: the cache holds at most its size, the least recently used
// entries go first, and forgetting a scope drops its entries only, evicted ones included.
func TestCacheBoundedAndForgotten(t *testing.T) {
	c := newCache(4)
	key := func(i int) Key { return Key{Namespace: "ns", Name: fmt.Sprint(i)} }
	for i := range 6 {
		c.add(key(i), applied{scope: fmt.Sprint("pipeline ", i%2), hash: fmt.Sprint(i)})
	}
	if n := c.len(); n != 4 {
		t.Fatalf("cache holds %d entries, want its size 4", n)
	}
	if _, ok := c.get(key(0)); ok {
		t.Error("the least recently used entry should have been evicted")
	}
	c.removeScope("pipeline 0")
	if n := c.len(); n != 2 {
		t.Errorf("after forgetting pipeline 0: %d entries, want 2 (pipeline 1's)", n)
	}
	for _, i := range []int{3, 5} {
		if _, ok := c.get(key(i)); !ok {
			t.Errorf("entry %d of pipeline 1 was dropped with pipeline 0", i)
		}
	}
	c.removeScope("pipeline 1")
	if n, idx := c.len(), len(c.byScope); n != 0 || idx != 0 {
		t.Errorf("after forgetting both: %d entries, %d scopes indexed, want none", n, idx)
	}
	// An object applied again for another owner moves to that owner's scope.
	c.add(key(9), applied{scope: "a"})
	c.add(key(9), applied{scope: "b"})
	c.removeScope("a")
	if _, ok := c.get(key(9)); !ok {
		t.Error("forgetting the old scope dropped an object now applied for another")
	}
}
