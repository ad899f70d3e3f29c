package envtestutil

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// countingClient counts the operator's API writes (in all, by kind, and per reconcile in the
// History) and gives the history what each reconcile reads.
type countingClient struct {
	client.Client
	Writes *atomic.Int64
	// ByKind counts writes by "verb kind", to tell what a failing test wrote.
	ByKind *sync.Map
	// History gets what each reconcile reads and writes.
	History *History
}

func (c countingClient) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	err := c.Client.Get(ctx, key, obj, opts...)
	c.History.noteRead(ctx, obj, key, err)
	return err
}

func (c countingClient) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	err := c.Client.List(ctx, list, opts...)
	c.History.noteRead(ctx, list, client.ObjectKey{}, err)
	return err
}

func (c countingClient) count(ctx context.Context, verb string, obj any) {
	c.Writes.Add(1)
	c.History.noteWrite(ctx)
	if c.ByKind == nil {
		return
	}
	kind := fmt.Sprintf("%T", obj)
	if u, ok := obj.(interface{ GetKind() string }); ok && u.GetKind() != "" {
		kind = u.GetKind()
	}
	n, _ := c.ByKind.LoadOrStore(verb+" "+kind, new(atomic.Int64))
	n.(*atomic.Int64).Add(1)
}

func (c countingClient) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	c.count(ctx, "create", obj)
	return c.Client.Create(ctx, obj, opts...)
}

func (c countingClient) Update(ctx context.Context, obj client.Object, opts ...client.UpdateOption) error {
	c.count(ctx, "update", obj)
	return c.Client.Update(ctx, obj, opts...)
}

func (c countingClient) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	c.count(ctx, "patch", obj)
	return c.Client.Patch(ctx, obj, patch, opts...)
}

func (c countingClient) Apply(ctx context.Context, obj runtime.ApplyConfiguration, opts ...client.ApplyOption) error {
	c.count(ctx, "apply", obj)
	return c.Client.Apply(ctx, obj, opts...)
}

func (c countingClient) Delete(ctx context.Context, obj client.Object, opts ...client.DeleteOption) error {
	c.count(ctx, "delete", obj)
	return c.Client.Delete(ctx, obj, opts...)
}

func (c countingClient) DeleteAllOf(ctx context.Context, obj client.Object, opts ...client.DeleteAllOfOption) error {
	c.count(ctx, "deleteAllOf", obj)
	return c.Client.DeleteAllOf(ctx, obj, opts...)
}

func (c countingClient) Status() client.SubResourceWriter {
	return countingStatus{SubResourceWriter: c.Client.Status(), C: c}
}

type countingStatus struct {
	client.SubResourceWriter
	C countingClient
}

func (s countingStatus) Create(ctx context.Context, obj client.Object, sub client.Object, opts ...client.SubResourceCreateOption) error {
	s.C.count(ctx, "status-create", obj)
	return s.SubResourceWriter.Create(ctx, obj, sub, opts...)
}

func (s countingStatus) Update(ctx context.Context, obj client.Object, opts ...client.SubResourceUpdateOption) error {
	s.C.count(ctx, "status-update", obj)
	return s.SubResourceWriter.Update(ctx, obj, opts...)
}

func (s countingStatus) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
	s.C.count(ctx, "status-patch", obj)
	return s.SubResourceWriter.Patch(ctx, obj, patch, opts...)
}

func (s countingStatus) Apply(ctx context.Context, obj runtime.ApplyConfiguration, opts ...client.SubResourceApplyOption) error {
	s.C.count(ctx, "status-apply", obj)
	return s.SubResourceWriter.Apply(ctx, obj, opts...)
}

// WritesByKind lists the counted writes by verb and kind.
func WritesByKind(m *sync.Map) map[string]int64 {
	out := map[string]int64{}
	m.Range(func(k, v any) bool {
		out[k.(string)] = v.(*atomic.Int64).Load()
		return true
	})
	return out
}
