package envtestutil

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/controllers"
	"github.com/strata-dev/strata/internal/controlplane"
	"github.com/strata-dev/strata/internal/testutil"
)

// NewScheme is the scheme of Strata's and the upstream kinds the tests read and write.
func NewScheme() *runtime.Scheme { return testutil.Scheme() }

// Operator is a control plane with Strata's controllers running against it.
type Operator struct {
	Env *controlplane.Env
	C   client.Client
	// Writes counts the operator's API writes.
	Writes *atomic.Int64
	ByKind *sync.Map
	// StopManager stops the running manager and waits for it.
	StopManager func()
	// setup are the options the controllers are set up with.
	setup []controllers.Option
	// History is the running manager's: every reconcile it finished.
	History *History
	// touches counts touch's label changes, to make each one a change.
	touches int
}

// StartOperator starts a control plane and the controllers; both stop when the test ends.
func StartOperator(t testing.TB, opts ...controlplane.Option) *Operator {
	t.Helper()
	return StartOperatorWith(t, nil, opts...)
}

// StartOperatorWith is startOperator with options for the controllers (a fake metrics source).
func StartOperatorWith(t testing.TB, setup []controllers.Option, opts ...controlplane.Option) *Operator {
	t.Helper()
	SkipUnderShort(t)
	ctrl.SetLogger(zap.New(zap.UseDevMode(true), zap.WriteTo(TestWriter{T: t})))
	env, c := testutil.ControlPlane(t, opts...)
	o := &Operator{Env: env, C: c, Writes: &atomic.Int64{}, setup: setup}
	o.StartManager(t)
	t.Cleanup(func() { o.StopManager() }) // the manager running then, before the control plane stops (cleanups run last first)
	return o
}

// StartManager starts a manager with Strata's controllers, counting its writes from zero.
func (o *Operator) StartManager(t testing.TB) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	writes, byKind, h := &atomic.Int64{}, &sync.Map{}, &History{}
	mgr, err := ctrl.NewManager(o.Env.Config, controllers.ManagerOptions(ctrl.Options{
		NewClient: func(cfg *rest.Config, opts client.Options) (client.Client, error) {
			c, err := client.New(cfg, opts)
			return countingClient{Client: c, Writes: writes, ByKind: byKind, History: h}, err
		},
		Scheme:  NewScheme(),
		Metrics: metricsserver.Options{BindAddress: "0"},
		// Each test runs its own manager in this process.
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	}))
	if err != nil {
		t.Fatal(err)
	}
	// No upstream operator runs here: every child would turn NotReconciled minutes in, and the
	// recheck would add reconciles and status writes to tests that count them; the test of
	// that report sets its own timeout (TestChildrenNoOperatorPicksUp).
	base := []controllers.Option{controllers.WithInstruments(h.instruments()), controllers.WithUpstreamStatusTimeout(0)}
	if err := controllers.Setup(ctx, mgr, append(base, o.setup...)...); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	o.Writes, o.ByKind, o.History = writes, byKind, h
	o.StopManager = func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
	}
}

// TestWriter sends the manager's logs to the test's log, shown only when a test fails.
type TestWriter struct{ T testing.TB }

func (w TestWriter) Write(p []byte) (int, error) { w.T.Log(string(p)); return len(p), nil }

// CreateSamples creates the sample tiers under names unique to the test and the sample pipeline
// in a fresh namespace, pointing at those tiers.
func (o *Operator) CreateSamples(t testing.TB) (ns string, tiers map[string]string) {
	t.Helper()
	ctx := context.Background()
	ns, err := controlplane.NewNamespace(ctx, o.C, "pipeline")
	if err != nil {
		t.Fatal(err)
	}
	samples, err := controlplane.Samples()
	if err != nil {
		t.Fatal(err)
	}
	tiers = map[string]string{}
	var pipeline *unstructured.Unstructured
	for _, s := range samples {
		switch s.GetKind() {
		case "StorageTier":
			tiers[s.GetName()] = s.GetName() + "-" + ns
			s.SetName(tiers[s.GetName()])
			localNodesFor(t, o.C, s, ns)
			if err := o.C.Create(ctx, s); err != nil {
				t.Fatal(err)
			}
		case "AnalyticsPipeline":
			pipeline = s
		}
	}
	pipeline.SetNamespace(ns)
	for _, path := range [][]string{{"kafka", "storage", "tier"}, {"spark", "shuffle", "spillTier"},
		{"spark", "shuffle", "dataTier"}, {"elasticsearch", "storage", "tier"}} {
		old, _, _ := unstructured.NestedString(pipeline.Object, append([]string{"spec"}, path...)...)
		_ = unstructured.SetNestedField(pipeline.Object, tiers[old], append([]string{"spec"}, path...)...)
	}
	if err := o.C.Create(ctx, pipeline); err != nil {
		t.Fatal(err)
	}
	return ns, tiers
}

// WaitFor reads the object until check passes, or fails the test after a minute.
func WaitFor(t testing.TB, c client.Client, obj client.Object, check func() error) {
	t.Helper()
	testutil.Eventually(t, time.Minute, obj.GetName(), func() error {
		if err := c.Get(context.Background(), client.ObjectKeyFromObject(obj), obj); err != nil {
			return err
		}
		return check()
	})
}

// WaitGone waits until the object is gone from the API server.
func WaitGone(t testing.TB, c client.Client, obj client.Object) {
	t.Helper()
	testutil.Eventually(t, time.Minute, obj.GetName()+" to be gone", func() error {
		err := c.Get(context.Background(), client.ObjectKeyFromObject(obj), obj)
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err == nil {
			return fmt.Errorf("still exists (finalizers %v)", obj.GetFinalizers())
		}
		return err
	})
}

// Condition checks that a condition has the given status and reason.
func Condition(conds []metav1.Condition, condType string, status metav1.ConditionStatus, reason string) error {
	c := apimeta.FindStatusCondition(conds, condType)
	if c == nil {
		return fmt.Errorf("no %s condition", condType)
	}
	if c.Status != status || (reason != "" && c.Reason != reason) {
		return fmt.Errorf("%s=%s (%s: %s), want %s (%s)", condType, c.Status, c.Reason, c.Message, status, reason)
	}
	return nil
}

// Meta is the pipeline's condition of that type, nil when it has none.
func Meta(p *v1alpha1.AnalyticsPipeline, condType string) *metav1.Condition {
	return apimeta.FindStatusCondition(p.Status.Conditions, condType)
}
