package upgrade

import (
	"context"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
)

// Write is one change the API server reported for an object: created, modified or deleted, and
// the field managers whose managedFields entry the change added or changed (who wrote it; an
// entry's time moves when its manager changes a value it owns, so a write that changes nothing
// a manager owns names nobody: "?").
type Write struct {
	Kind, Namespace, Name string
	Type                  watch.EventType
	Managers              []string
	// Content is whether the write changed anything but metadata and status (a taking over of
	// fields that keeps their values changes managedFields only).
	Content bool
}

// Recorder watches kinds from a resourceVersion on and keeps every write, with the object as it
// was before each (from the list it started from).
type Recorder struct {
	mu     sync.Mutex
	writes []Write
	last   map[string]*unstructured.Unstructured
	errs   []error
}

// Record lists every resource of gvrs (kinds by resource), then watches each from its list's
// resourceVersion until ctx ends. It returns once every watch runs: no write after it returns
// is missed.
func Record(ctx context.Context, dc dynamic.Interface, gvrs map[string]schema.GroupVersionResource) (*Recorder, error) {
	r := &Recorder{last: map[string]*unstructured.Unstructured{}}
	for kind, gvr := range gvrs {
		list, err := dc.Resource(gvr).List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, fmt.Errorf("listing %s: %w", kind, err)
		}
		for i := range list.Items {
			r.last[objKey(kind, &list.Items[i])] = &list.Items[i]
		}
		w, err := dc.Resource(gvr).Watch(ctx, metav1.ListOptions{ResourceVersion: list.GetResourceVersion()})
		if err != nil {
			return nil, fmt.Errorf("watching %s: %w", kind, err)
		}
		go r.follow(ctx, dc, gvr, kind, w)
	}
	return r, nil
}

// follow keeps one kind's watch, starting it again from the last resourceVersion seen when the
// API server ends it (its watch timeout).
func (r *Recorder) follow(ctx context.Context, dc dynamic.Interface, gvr schema.GroupVersionResource, kind string, w watch.Interface) {
	rv := ""
	for {
		for ev := range w.ResultChan() {
			if ev.Type == watch.Error {
				r.fail(fmt.Errorf("watching %s: %v", kind, apierrors.FromObject(ev.Object)))
				continue
			}
			u, ok := ev.Object.(*unstructured.Unstructured)
			if !ok {
				continue
			}
			rv = u.GetResourceVersion()
			if ev.Type != watch.Bookmark {
				r.add(kind, ev.Type, u)
			}
		}
		if ctx.Err() != nil {
			return
		}
		var err error
		if w, err = dc.Resource(gvr).Watch(ctx, metav1.ListOptions{ResourceVersion: rv}); err != nil {
			if ctx.Err() == nil {
				// A gap: the writes of this kind from here on are not known.
				r.fail(fmt.Errorf("watching %s again from %s: %w", kind, rv, err))
			}
			return
		}
	}
}

func (r *Recorder) fail(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, err)
}

func (r *Recorder) add(kind string, typ watch.EventType, u *unstructured.Unstructured) {
	r.mu.Lock()
	defer r.mu.Unlock()
	k := objKey(kind, u)
	before := r.last[k]
	r.last[k] = u
	if typ == watch.Deleted {
		delete(r.last, k)
	}
	r.writes = append(r.writes, Write{Kind: kind, Namespace: u.GetNamespace(), Name: u.GetName(), Type: typ,
		Managers: writers(before, u), Content: before == nil || typ == watch.Deleted || !reflect.DeepEqual(content(before), content(u))})
}

// writers are the managers whose managedFields entry after holds and before does not, or holds
// otherwise (fields or time).
func writers(before, after *unstructured.Unstructured) []string {
	type entryKey struct{ manager, operation, subresource string }
	old := map[entryKey]metav1.ManagedFieldsEntry{}
	if before != nil {
		for _, e := range before.GetManagedFields() {
			old[entryKey{e.Manager, string(e.Operation), e.Subresource}] = e
		}
	}
	seen := map[string]bool{}
	for _, e := range after.GetManagedFields() {
		o, ok := old[entryKey{e.Manager, string(e.Operation), e.Subresource}]
		if !ok || !reflect.DeepEqual(o.FieldsV1, e.FieldsV1) || !o.Time.Equal(e.Time) {
			seen[e.Manager] = true
		}
	}
	out := make([]string, 0, len(seen))
	for m := range seen {
		out = append(out, m)
	}
	sort.Strings(out)
	if len(out) == 0 {
		out = []string{"?"}
	}
	return out
}

// Writes are the writes recorded so far, and the watches' errors (a gap in the record).
func (r *Recorder) Writes() ([]Write, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var err error
	if len(r.errs) > 0 {
		err = fmt.Errorf("the record has gaps: %v", r.errs)
	}
	return append([]Write(nil), r.writes...), err
}

// content is the object without metadata and status.
func content(u *unstructured.Unstructured) map[string]any {
	out := map[string]any{}
	for k, v := range u.Object {
		if k != "metadata" && k != "status" {
			out[k] = v
		}
	}
	return out
}

func objKey(kind string, u *unstructured.Unstructured) string {
	return kind + "/" + u.GetNamespace() + "/" + u.GetName()
}

// ByKind counts writes per kind and field manager, as "Kind: manager=N ..." lines, kinds in order.
func ByKind(writes []Write) []string {
	counts := map[string]map[string]int{}
	for _, w := range writes {
		if counts[w.Kind] == nil {
			counts[w.Kind] = map[string]int{}
		}
		for _, m := range w.Managers {
			counts[w.Kind][m]++
		}
	}
	var out []string
	for kind, byManager := range counts {
		var parts []string
		for m, n := range byManager {
			parts = append(parts, fmt.Sprintf("%s=%d", m, n))
		}
		sort.Strings(parts)
		out = append(out, kind+": "+strings.Join(parts, " "))
	}
	sort.Strings(out)
	return out
}
