package controllers_test

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

func newScheme() *runtime.Scheme { return testutil.Scheme() }

// operator is a control plane with Strata's controllers running against it.
type operator struct {
	env *controlplane.Env
	c   client.Client
	// writes counts the operator's API writes.
	writes *atomic.Int64
	byKind *sync.Map
	// stopManager stops the running manager and waits for it.
	stopManager func()
	// setup are the options the controllers are set up with.
	setup []controllers.Option
	// history is the running manager's: every reconcile it finished.
	history *history
	// touches counts touch's label changes, to make each one a change.
	touches int
}

// startOperator starts a control plane and the controllers; both stop when the test ends.
func startOperator(t testing.TB, opts ...controlplane.Option) *operator {
	t.Helper()
	return startOperatorWith(t, nil, opts...)
}

// startOperatorWith is startOperator with options for the controllers (a fake metrics source).
func startOperatorWith(t testing.TB, setup []controllers.Option, opts ...controlplane.Option) *operator {
	t.Helper()
	skipUnderShort(t)
	ctrl.SetLogger(zap.New(zap.UseDevMode(true), zap.WriteTo(testWriter{t})))
	env, c := testutil.ControlPlane(t, opts...)
	o := &operator{env: env, c: c, writes: &atomic.Int64{}, setup: setup}
	o.startManager(t)
	t.Cleanup(func() { o.stopManager() }) // the manager running then, before the control plane stops (cleanups run last first)
	return o
}

// startManager starts a manager with Strata's controllers, counting its writes from zero.
func (o *operator) startManager(t testing.TB) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	writes, byKind, h := &atomic.Int64{}, &sync.Map{}, &history{}
	mgr, err := ctrl.NewManager(o.env.Config, controllers.ManagerOptions(ctrl.Options{
		NewClient: func(cfg *rest.Config, opts client.Options) (client.Client, error) {
			c, err := client.New(cfg, opts)
			return countingClient{Client: c, writes: writes, byKind: byKind, history: h}, err
		},
		Scheme:  newScheme(),
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
	o.writes, o.byKind, o.history = writes, byKind, h
	o.stopManager = func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
	}
}

// testWriter sends the manager's logs to the test's log, shown only when a test fails.
type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) { w.t.Log(string(p)); return len(p), nil }

// createSamples creates the sample tiers under names unique to the test and the sample pipeline
// in a fresh namespace, pointing at those tiers.
func (o *operator) createSamples(t testing.TB) (ns string, tiers map[string]string) {
	t.Helper()
	ctx := context.Background()
	ns, err := controlplane.NewNamespace(ctx, o.c, "pipeline")
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
			localNodesFor(t, o.c, s, ns)
			if err := o.c.Create(ctx, s); err != nil {
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
	if err := o.c.Create(ctx, pipeline); err != nil {
		t.Fatal(err)
	}
	return ns, tiers
}

// waitFor reads the object until check passes, or fails the test after a minute.
func waitFor(t testing.TB, c client.Client, obj client.Object, check func() error) {
	t.Helper()
	testutil.Eventually(t, time.Minute, obj.GetName(), func() error {
		if err := c.Get(context.Background(), client.ObjectKeyFromObject(obj), obj); err != nil {
			return err
		}
		return check()
	})
}

// waitGone waits until the object is gone from the API server.
func waitGone(t testing.TB, c client.Client, obj client.Object) {
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

// condition checks that a condition has the given status and reason.
func condition(conds []metav1.Condition, condType string, status metav1.ConditionStatus, reason string) error {
	c := apimeta.FindStatusCondition(conds, condType)
	if c == nil {
		return fmt.Errorf("no %s condition", condType)
	}
	if c.Status != status || (reason != "" && c.Reason != reason) {
		return fmt.Errorf("%s=%s (%s: %s), want %s (%s)", condType, c.Status, c.Reason, c.Message, status, reason)
	}
	return nil
}

func meta(p *v1alpha1.AnalyticsPipeline, condType string) *metav1.Condition {
	return apimeta.FindStatusCondition(p.Status.Conditions, condType)
}
