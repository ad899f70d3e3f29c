package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/http"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/internal/controlplane"
	"github.com/strata-dev/strata/internal/testutil"
)

// TestManagerStarts runs the real manager against a control plane: it becomes ready, guards its
// metrics endpoint, and sets conditions on the sample pipeline.
func TestManagerStarts(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	env, c := testutil.ControlPlane(t)

	o := options{metricsAddr: testutil.FreePort(t), probeAddr: testutil.FreePort(t), secureMetrics: true, leaderElect: true, leaderNamespace: "default"}
	done := make(chan error, 1)
	go func() { done <- run(ctx, env.Config, o) }()

	ns, err := controlplane.CreateSamples(ctx, c, "manager")
	if err != nil {
		t.Fatal(err)
	}

	eventually(t, done, "the manager to be ready", testutil.HTTPReady("http://"+o.probeAddr+"/readyz"))

	eventually(t, done, "the sample pipeline's conditions", func() error {
		p := &v1alpha1.AnalyticsPipeline{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "sensors"}, p); err != nil {
			return err
		}
		cond := meta.FindStatusCondition(p.Status.Conditions, v1alpha1.ConditionReady)
		if cond == nil || p.Status.ObservedGeneration != p.Generation {
			return fmt.Errorf("no Ready condition for generation %d yet: %+v", p.Generation, p.Status)
		}
		return nil
	})

	// Metrics are served over TLS and refuse a caller the API server does not know.
	insecure := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // self-signed test cert
	eventually(t, done, "metrics to refuse an anonymous caller", func() error {
		resp, err := insecure.Get("https://" + o.metricsAddr + "/metrics")
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized && resp.StatusCode != http.StatusForbidden {
			return fmt.Errorf("anonymous /metrics: %s, want 401 or 403", resp.Status)
		}
		return nil
	})

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("manager stopped with %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Error("manager did not stop within 30s of cancellation")
	}
}

// eventually is testutil.Eventually that also fails at once when the manager exits.
func eventually(t *testing.T, done <-chan error, what string, f func() error) {
	t.Helper()
	testutil.Eventually(t, time.Minute, what, func() error {
		select {
		case err := <-done:
			t.Fatalf("manager exited while waiting for %s: %v", what, err)
		default:
		}
		return f()
	})
}
