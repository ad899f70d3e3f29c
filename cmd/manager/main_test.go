package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/internal/controlplane"
	pipelinemetrics "github.com/strata-dev/strata/internal/metrics"
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

	// And serve the pipeline metrics, after the registry's, to a caller allowed to get
	// /metrics (the chart's metrics-reader ClusterRole); a known caller without that right is
	// refused. The API server reviews both tokens (TokenReview, SubjectAccessReview).
	reader, stranger := serviceAccountToken(ctx, t, c, "metrics-reader", true), serviceAccountToken(ctx, t, c, "stranger", false)
	get := func(token string) (int, string, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+o.metricsAddr+"/metrics", nil)
		if err != nil {
			return 0, "", err
		}
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := insecure.Do(req)
		if err != nil {
			return 0, "", err
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body), err
	}
	eventually(t, done, "metrics to serve the pipeline metrics to an authorized caller", func() error {
		code, body, err := get(reader)
		if err != nil {
			return err
		}
		if code != http.StatusOK || !strings.Contains(body, "controller_runtime_reconcile_total{") {
			return fmt.Errorf("authorized /metrics: %d without controller-runtime's metrics", code)
		}
		for _, line := range strings.Split(body, "\n") {
			if strings.HasPrefix(line, pipelinemetrics.Info+"{") && strings.Contains(line, `namespace="`+ns+`"`) {
				return nil
			}
		}
		return fmt.Errorf("authorized /metrics: no %s of the sample pipeline in %s", pipelinemetrics.Info, ns)
	})
	if code, _, err := get(stranger); err != nil || code != http.StatusForbidden {
		t.Errorf("/metrics for a caller without get on it: %d (%v), want 403", code, err)
	}

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

// serviceAccountToken creates a ServiceAccount in default and returns a token of it; allowed
// binds it to a ClusterRole that may get /metrics, as the chart's metrics-reader role does.
func serviceAccountToken(ctx context.Context, t *testing.T, c client.Client, name string, allowed bool) string {
	t.Helper()
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name}}
	objs := []client.Object{sa}
	if allowed {
		objs = append(objs,
			&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name},
				Rules: []rbacv1.PolicyRule{{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}}}},
			&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
				RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name},
				Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: "default", Name: name}}})
	}
	for _, o := range objs {
		if err := c.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	req := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)}}
	if err := c.SubResource("token").Create(ctx, sa, req); err != nil {
		t.Fatal(err)
	}
	return req.Status.Token
}
