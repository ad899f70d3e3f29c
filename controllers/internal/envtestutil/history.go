package envtestutil

import (
	"context"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/strata-dev/strata/controllers"
	"github.com/strata-dev/strata/internal/testutil"
)

// History records every reconcile the operator finishes: which controller, for which object,
// what it read from the cache (with the resourceVersions), how many writes it made, how many
// events it recorded, and its result. Tests wait on the reconcile that saw their change and
// assert on it, so "a reconcile with nothing changed writes nothing" and "an invalid spec is
// not retried" are proven on the reconcile itself, not by sleeping and counting afterwards.
type History struct {
	mu   sync.Mutex
	runs []*Run
	// events are the recorded events' regarding objects, in order; a run's events are those
	// about its object recorded while it ran.
	Events []string
}

// Run is one finished (or running) reconcile.
type Run struct {
	controller string
	key        types.NamespacedName
	// read maps "Kind namespace/name" to the resourceVersion read, "" for not found.
	read   map[string]string
	Writes int
	// firstEvent and events: the index into history.events when it started, and its count.
	firstEvent, Events int
	Result             ctrl.Result
	Err                error
	done               bool
}

type runKey struct{}

// instruments are the controllers' instruments that fill h.
func (h *History) instruments() controllers.Instruments {
	return controllers.Instruments{
		Reconciler: func(controller string, r reconcile.Reconciler) reconcile.Reconciler {
			return reconcile.Func(func(ctx context.Context, req reconcile.Request) (ctrl.Result, error) {
				h.mu.Lock()
				cur := &Run{controller: controller, key: req.NamespacedName, read: map[string]string{}, firstEvent: len(h.Events)}
				h.runs = append(h.runs, cur)
				h.mu.Unlock()
				res, err := r.Reconcile(context.WithValue(ctx, runKey{}, cur), req)
				h.mu.Lock()
				cur.Result, cur.Err, cur.done = res, err, true
				for _, e := range h.Events[cur.firstEvent:] {
					if e == req.String() {
						cur.Events++
					}
				}
				h.mu.Unlock()
				return res, err
			})
		},
		Recorder: func(rec events.EventRecorder) events.EventRecorder { return recorder{EventRecorder: rec, h: h} },
	}
}

// recorder notes each event's object in the history before recording it.
type recorder struct {
	events.EventRecorder
	h *History
}

func (r recorder) Eventf(regarding, related runtime.Object, eventtype, reason, action, note string, args ...any) {
	if o, err := apimeta.Accessor(regarding); err == nil {
		r.h.mu.Lock()
		r.h.Events = append(r.h.Events, types.NamespacedName{Namespace: o.GetNamespace(), Name: o.GetName()}.String())
		r.h.mu.Unlock()
	}
	r.EventRecorder.Eventf(regarding, related, eventtype, reason, action, note, args...)
}

// noteRead records what a reconcile read (nothing outside a reconcile).
func (h *History) noteRead(ctx context.Context, obj runtime.Object, key types.NamespacedName, err error) {
	cur, _ := ctx.Value(runKey{}).(*Run)
	if cur == nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if apierrors.IsNotFound(err) {
		cur.read[kindOf(obj)+" "+key.String()] = ""
		return
	}
	if err != nil {
		return
	}
	// A list's items carry no kind of their own in a cache (metadata-only lists least of all):
	// they are of the list's.
	kind, items := kindOf(obj), []runtime.Object{obj}
	if apimeta.IsListType(obj) {
		items, _ = apimeta.ExtractList(obj)
	}
	for _, item := range items {
		if o, err := apimeta.Accessor(item); err == nil {
			cur.read[kind+" "+types.NamespacedName{Namespace: o.GetNamespace(), Name: o.GetName()}.String()] = o.GetResourceVersion()
		}
	}
}

// noteWrite counts a write against the reconcile that made it.
func (h *History) noteWrite(ctx context.Context) {
	if cur, _ := ctx.Value(runKey{}).(*Run); cur != nil {
		h.mu.Lock()
		cur.Writes++
		h.mu.Unlock()
	}
}

// kindOf names an object's kind: its GVK's, else its Go type's.
func kindOf(obj any) string {
	if o, ok := obj.(runtime.Object); ok {
		if k := o.GetObjectKind().GroupVersionKind().Kind; k != "" {
			return strings.TrimSuffix(k, "List")
		}
	}
	return strings.TrimSuffix(reflect.Indirect(reflect.ValueOf(obj)).Type().Name(), "List")
}

// Saw is a condition on a run: it read obj at resourceVersion rv or later ("" : found it gone).
func Saw(kind string, obj client.Object, rv string) func(*Run) error {
	name := kind + " " + client.ObjectKeyFromObject(obj).String()
	return func(r *Run) error {
		got, ok := r.read[name]
		switch {
		case !ok:
			return fmt.Errorf("did not read %s", name)
		case rv == "" && got != "":
			return fmt.Errorf("read %s at %s, want it gone", name, got)
		case rv != "" && (got == "" || atoi(got) < atoi(rv)):
			return fmt.Errorf("read %s at %q, want %s or later", name, got, rv)
		}
		return nil
	}
}

// atoi reads an etcd resourceVersion, a revision number: envtest's API server runs on etcd.
func atoi(rv string) uint64 {
	n, _ := strconv.ParseUint(rv, 10, 64)
	return n
}

// Finished waits until a reconcile by controller of key that meets cond has finished, and
// returns it: the point a test asserts on what its change led to.
func (h *History) Finished(t testing.TB, controller string, key types.NamespacedName, cond func(*Run) error) Run {
	t.Helper()
	var found Run
	testutil.Eventually(t, time.Minute, fmt.Sprintf("a finished %s reconcile of %s", controller, key), func() error {
		h.mu.Lock()
		defer h.mu.Unlock()
		last := fmt.Errorf("no reconcile yet")
		for _, r := range h.runs {
			if r.controller != controller || r.key != key || !r.done {
				continue
			}
			if last = cond(r); last == nil {
				found = *r
				return nil
			}
		}
		return last
	})
	return found
}

// Touch changes a label of the pipeline, which passes its event filter and so forces a full
// reconcile with inputs the plan does not read, and returns that reconcile once it finished.
func (o *Operator) Touch(t testing.TB, p client.Object) Run {
	t.Helper()
	o.touches++
	patch := fmt.Sprintf(`{"metadata":{"labels":{"test.strata.dev/touch":"%d"}}}`, o.touches)
	if err := o.C.Patch(context.Background(), p, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
		t.Fatal(err)
	}
	return o.History.Finished(t, "analyticspipeline", client.ObjectKeyFromObject(p), Saw("AnalyticsPipeline", p, p.GetResourceVersion()))
}

// Settle waits until the operator is at rest for the pipeline: a forced reconcile writes
// nothing. The first touches may still write (children whose status the upstream fields
// Settle), so it tries a few times.
func (o *Operator) Settle(t testing.TB, p client.Object) {
	t.Helper()
	var last Run
	for i := 0; i < 10; i++ {
		if last = o.Touch(t, p); last.Writes == 0 {
			return
		}
	}
	t.Fatalf("the operator never settled on %s: the last reconcile wrote %d times", p.GetName(), last.Writes)
}
