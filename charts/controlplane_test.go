package charts_test

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/internal/controlplane"
	"github.com/strata-dev/strata/internal/desired"
	pipelinemetrics "github.com/strata-dev/strata/internal/metrics"
	"github.com/strata-dev/strata/internal/testutil"
)

// The rendered chart applied to a real API server: every object accepted, the operator's
// permissions enough for what it does, and its pods admitted under the restricted Pod Security
// Standard.

// TestControlPlane runs the chart against a real kube-apiserver with Strata's and the upstream
// CRDs installed (no kubelet: no pod ever runs).
func TestControlPlane(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane")
	}
	helm(t) // fail early, with the message saying how to get it
	ctrllog.SetLogger(zap.New(zap.WriteTo(io.Discard)))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	env, c := testutil.ControlPlane(t)
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kubeconfig, env.KubeConfig, 0o600); err != nil {
		t.Fatal(err)
	}
	// Namespaces the releases go to, enforcing the "restricted" Pod Security Standard, and the
	// ones the all-options values name.
	for _, ns := range []string{namespace, allOnNamespace, "monitoring", "team-a", "team-b"} {
		obj := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: map[string]string{
			"pod-security.kubernetes.io/enforce": "restricted",
		}}}
		if err := c.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Create(ctx, &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "platform-critical"}, Value: 1000000}); err != nil {
		t.Fatal(err)
	}

	t.Run("dry-run every rendered object", func(t *testing.T) {
		for _, r := range []struct {
			rel, ns string
			args    []string
		}{
			{release, namespace, nil},
			{allOnRelease, allOnNamespace, []string{"--values", allOnValues}},
		} {
			objs := render(t, r.rel, r.ns, append([]string{"--include-crds"}, r.args...)...)
			for _, o := range objs {
				err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(o),
					client.FieldOwner("strata-chart-test"), client.ForceOwnership, client.DryRunAll)
				if err != nil {
					t.Errorf("%s: %s/%s: %v", r.rel, o.GetKind(), o.GetName(), err)
				}
			}
			t.Logf("%s: %d objects accepted by a server-side dry run", r.rel, len(objs))
		}
	})

	t.Run("install, run as the chart's ServiceAccount, uninstall", func(t *testing.T) {
		if out, err := runHelm(t, "install", release, chartDir(t), "--namespace", namespace,
			"--kubeconfig", kubeconfig, "--wait=false"); err != nil {
			t.Fatal(err)
		} else {
			t.Logf("%s", out)
		}
		created := releaseObjects(fullname, namespace, "strata")
		for _, o := range created {
			if err := c.Get(ctx, client.ObjectKeyFromObject(o), o); err != nil {
				t.Errorf("after helm install: %T %s: %v", o, o.GetName(), err)
			}
		}
		podSecurity(ctx, t, c, fullname, namespace)
		runAsServiceAccount(ctx, t, env, c, namespace, "strata", fullname)

		if out, err := runHelm(t, "uninstall", release, "--namespace", namespace, "--kubeconfig", kubeconfig); err != nil {
			t.Fatal(err)
		} else {
			t.Logf("%s", out)
		}
		for _, o := range created {
			err := c.Get(ctx, client.ObjectKeyFromObject(o), o)
			if !apierrors.IsNotFound(err) {
				t.Errorf("after helm uninstall: %T %s: %v, want NotFound", o, o.GetName(), err)
			}
		}
		// Helm never deletes what crds/ installed: the CRDs stay, and with them every pipeline
		// and tier (the README says so).
		for _, name := range []string{"analyticspipelines.strata.dev", "storagetiers.strata.dev"} {
			crd := &unstructured.Unstructured{}
			crd.SetGroupVersionKind(schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"})
			if err := c.Get(ctx, client.ObjectKey{Name: name}, crd); err != nil {
				t.Errorf("CRD %s after helm uninstall: %v, want it kept", name, err)
			}
		}
		tiers := &v1alpha1.StorageTierList{}
		if err := c.List(ctx, tiers); err != nil || len(tiers.Items) == 0 {
			t.Errorf("StorageTiers after helm uninstall: %d, %v; want them kept", len(tiers.Items), err)
		}
	})

	t.Run("install and uninstall with every option on", func(t *testing.T) {
		if _, err := runHelm(t, "install", allOnRelease, chartDir(t), "--namespace", allOnNamespace,
			"--kubeconfig", kubeconfig, "--wait=false", "--values", allOnValues); err != nil {
			t.Fatal(err)
		}
		objs := render(t, allOnRelease, allOnNamespace, "--values", allOnValues)
		for _, o := range objs {
			if err := c.Get(ctx, client.ObjectKeyFromObject(o), o.DeepCopy()); err != nil {
				t.Errorf("after helm install: %s/%s: %v", o.GetKind(), o.GetName(), err)
			}
		}
		podSecurity(ctx, t, c, allOnFullname, allOnNamespace)
		if _, err := runHelm(t, "uninstall", allOnRelease, "--namespace", allOnNamespace, "--kubeconfig", kubeconfig); err != nil {
			t.Fatal(err)
		}
		for _, o := range objs {
			if err := c.Get(ctx, client.ObjectKeyFromObject(o), o.DeepCopy()); !apierrors.IsNotFound(err) {
				t.Errorf("after helm uninstall: %s/%s: %v, want NotFound", o.GetKind(), o.GetName(), err)
			}
		}
	})
}

// releaseObjects are the objects a default install creates.
func releaseObjects(prefix, ns, sa string) []client.Object {
	return []client.Object{
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa, Namespace: ns}},
		&corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: prefix + "-metrics", Namespace: ns}},
		&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: prefix + "-manager"}},
		&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: prefix + "-metrics-reader"}},
		&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: prefix + "-manager"}},
		&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: prefix + "-leader-election", Namespace: ns}},
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: prefix + "-leader-election", Namespace: ns}},
		&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: prefix + "-volume-cleanup", Namespace: ns}},
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: prefix + "-volume-cleanup", Namespace: ns}},
		deployment(prefix, ns),
	}
}

func deployment(name, ns string) *unstructured.Unstructured {
	d := &unstructured.Unstructured{}
	d.SetGroupVersionKind(schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"})
	d.SetName(name)
	d.SetNamespace(ns)
	return d
}

// podSecurity has the API server's PodSecurity admission judge the installed Deployment's pod:
// a dry-run create in a namespace that enforces "restricted".
func podSecurity(ctx context.Context, t *testing.T, c client.Client, name, ns string) {
	t.Helper()
	d := deployment(name, ns)
	if err := c.Get(ctx, client.ObjectKeyFromObject(d), d); err != nil {
		t.Fatal(err)
	}
	tmpl, _, _ := unstructured.NestedMap(d.Object, "spec", "template")
	pod := &unstructured.Unstructured{Object: tmpl}
	pod.SetAPIVersion("v1")
	pod.SetKind("Pod")
	pod.SetName(name + "-pod-security-check")
	pod.SetNamespace(ns)
	if err := c.Create(ctx, pod, client.DryRunAll); err != nil {
		t.Errorf("the API server refuses the operator's pod in a namespace enforcing the restricted Pod Security Standard: %v", err)
	}
}

// runAsServiceAccount runs the real manager binary (built as the image builds it) as the chart's
// ServiceAccount, through impersonation, with the flags the chart passes: it must win the leader
// election, sync its caches, reconcile the samples, serve metrics to a reader bound to the
// metrics-reader ClusterRole and refuse others — and never be refused anything by the API server.
func runAsServiceAccount(ctx context.Context, t *testing.T, env *controlplane.Env, c client.Client, ns, sa, prefix string) {
	t.Helper()
	root, _ := controlplane.RepoRoot()
	bin := t.TempDir()
	build := exec.Command(filepath.Join(root, "hack", "build.sh"), bin)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("hack/build.sh: %v\n%s", err, out)
	}
	cfg, err := clientcmd.Load(env.KubeConfig)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range cfg.AuthInfos {
		a.Impersonate = "system:serviceaccount:" + ns + ":" + sa
		a.ImpersonateGroups = []string{"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"}
	}
	saKubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, saKubeconfig); err != nil {
		t.Fatal(err)
	}

	// The chart's args, with addresses on the loopback and the lease's namespace given (in a pod
	// it is read from the ServiceAccount's mount).
	probe, metrics := testutil.FreePort(t), testutil.FreePort(t)
	d := deployment(prefix, ns)
	if err := c.Get(ctx, client.ObjectKeyFromObject(d), d); err != nil {
		t.Fatal(err)
	}
	chartArgs, _, _ := unstructured.NestedStringSlice(container(t, d), "args")
	var args []string
	for _, a := range chartArgs {
		switch {
		case strings.HasPrefix(a, "--health-probe-bind-address="):
			a = "--health-probe-bind-address=" + probe
		case strings.HasPrefix(a, "--metrics-bind-address="):
			a = "--metrics-bind-address=" + metrics
		}
		args = append(args, a)
	}
	args = append(args, "--leader-election-namespace="+ns)
	logPath := filepath.Join(t.TempDir(), "manager.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	mgr := exec.Command(filepath.Join(bin, "manager"), args...)
	mgr.Env = append(os.Environ(), "KUBECONFIG="+saKubeconfig)
	mgr.Stdout, mgr.Stderr = logFile, logFile
	if err := mgr.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- mgr.Wait() }()
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		_ = mgr.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(30 * time.Second):
			_ = mgr.Process.Kill()
			<-exited
			t.Error("the manager did not stop within 30s of SIGTERM")
		}
	}
	defer func() {
		stop()
		b, _ := os.ReadFile(logPath)
		if t.Failed() {
			t.Logf("manager log:\n%s", b)
		}
	}()
	wait := func(what string, f func() error) {
		t.Helper()
		testutil.Eventually(t, 3*time.Minute, what, func() error {
			select {
			case err := <-exited:
				stopped = true
				b, _ := os.ReadFile(logPath)
				t.Fatalf("the manager exited (%v) while waiting for %s:\n%s", err, what, b)
			default:
			}
			return f()
		})
	}

	wait("the manager to be ready (caches synced with the chart's RBAC)", testutil.HTTPReady("http://"+probe+"/readyz"))

	wait("the leader election lease", func() error {
		lease := &coordinationv1.Lease{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "strata.strata.dev"}, lease); err != nil {
			return err
		}
		if lease.Spec.HolderIdentity == nil || *lease.Spec.HolderIdentity == "" {
			return errors.New("no holder yet")
		}
		return nil
	})

	// The samples, reconciled: status written, children created, events recorded.
	pipelineNS, err := controlplane.CreateSamples(ctx, c, "chart")
	if err != nil {
		t.Fatal(err)
	}
	wait("the sample pipeline's conditions", func() error {
		p := &v1alpha1.AnalyticsPipeline{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: pipelineNS, Name: "sensors"}, p); err != nil {
			return err
		}
		if meta.FindStatusCondition(p.Status.Conditions, v1alpha1.ConditionReady) == nil || p.Status.ObservedGeneration != p.Generation {
			return fmt.Errorf("no Ready condition for generation %d yet: %+v", p.Generation, p.Status.Conditions)
		}
		return nil
	})
	wait("the sample pipeline's Kafka cluster", func() error {
		k := &unstructured.UnstructuredList{}
		k.SetGroupVersionKind(schema.GroupVersionKind{Group: "kafka.strimzi.io", Version: "v1", Kind: "KafkaList"})
		if err := c.List(ctx, k, client.InNamespace(pipelineNS)); err != nil {
			return err
		}
		if len(k.Items) == 0 {
			return errors.New("no Kafka yet")
		}
		return nil
	})
	// The driver's RoleBinding to strata-spark-driver: the manager, which holds only bind on
	// that ClusterRole and none of its rules, may create it (the API server's escalation check).
	wait("the sample driver's RoleBinding", func() error {
		rb := &rbacv1.RoleBinding{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: pipelineNS, Name: "sensors-spark"}, rb); err != nil {
			return err
		}
		if rb.RoleRef.Name != desired.SparkDriverClusterRole {
			return fmt.Errorf("RoleBinding binds %q", rb.RoleRef.Name)
		}
		return nil
	})

	// Metrics: a ServiceAccount bound to the chart's metrics-reader reads them; another may not.
	cs, err := kubernetes.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	token := func(name string) string {
		t.Helper()
		if err := c.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}); err != nil {
			t.Fatal(err)
		}
		tr, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx, name, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return tr.Status.Token
	}
	reader, stranger := token("scraper"), token("stranger")
	if err := c.Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "scraper-reads-strata-metrics"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: prefix + "-metrics-reader"},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: "scraper", Namespace: ns}},
	}); err != nil {
		t.Fatal(err)
	}
	scrape := func(token string) (int, string, error) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+metrics+"/metrics", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		hc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
			TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // the manager's self-signed certificate
		}}
		resp, err := hc.Do(req)
		if err != nil {
			return 0, "", err
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b), nil
	}
	wait("the metrics-reader to read the metrics", func() error {
		code, body, err := scrape(reader)
		if err != nil {
			return err
		}
		if code != http.StatusOK || !strings.Contains(body, "controller_runtime_reconcile_total") {
			return fmt.Errorf("status %d: %.300s", code, body)
		}
		// The pipeline metrics follow the registry's, through the same authorization
		// (cmd/manager's metricsFilter): the sample pipeline's info series.
		for _, line := range strings.Split(body, "\n") {
			if strings.HasPrefix(line, pipelinemetrics.Info+"{") && strings.Contains(line, `namespace="`+pipelineNS+`"`) {
				return nil
			}
		}
		return fmt.Errorf("no %s of the sample pipeline in %s", pipelinemetrics.Info, pipelineNS)
	})
	if code, _, err := scrape(stranger); err != nil || code != http.StatusForbidden {
		t.Errorf("a ServiceAccount without metrics-reader got %d (%v), want 403", code, err)
	}
	_ = c.Delete(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "scraper-reads-strata-metrics"}})

	// Leaves the lease cleanly, then: was anything refused?
	stop()
	logText, _ := os.ReadFile(logPath)
	var refused []string
	for _, line := range strings.Split(string(logText), "\n") {
		if strings.Contains(strings.ToLower(line), "forbidden") {
			refused = append(refused, line)
		}
	}
	if len(refused) > 0 {
		t.Errorf("the API server refused the manager running as the chart's ServiceAccount %d times; "+
			"add the missing kubebuilder:rbac markers and run `make manifests`:\n%s", len(refused), strings.Join(refused, "\n"))
	}
}
