package lab

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/internal/testutil"
	"github.com/strata-dev/strata/internal/testutil/gen"
	"github.com/strata-dev/strata/internal/testutil/proc"
)

// Operator is the real operator (cmd/manager, built and run as a process, as its container runs
// it) reconciling against a control plane of its own (envtest: kube-apiserver and etcd with
// Strata's and the upstream CRDs). Its metrics endpoint is what the chart deploys: HTTPS with a
// certificate the lab's CA signed for the metrics Service's name, and every scraper
// authenticated and authorized by the API server (controller-runtime's
// filters.WithAuthenticationAndAuthorization). No Strimzi, Spark operator or ECK runs, so the
// pipelines it reconciles are planned and report their plans, and become Ready only when a
// scenario writes their children's statuses (ready_test.go).
type Operator struct {
	Address string
	Client  client.Client
	// Config reaches the control plane's API server as a cluster admin.
	Config *rest.Config
	// CAFile and TokenFile are what Prometheus is given: the CA of the metrics certificate and
	// the token of the monitoring ServiceAccount bound to the chart's metrics-reader ClusterRole.
	CAFile, TokenFile string
	// Env is added to the process's environment (NAME=value) from its next start: the
	// benchmark's GOMEMLIMIT, for the operator alone and not the control plane's processes.
	Env []string

	chart     Chart
	proc      *process
	clientset kubernetes.Interface
	// What Restart runs again: the binary, its arguments, the directory of its logs, its probe
	// address, and how many times it started.
	bin, dir, probe string
	args            []string
	starts          int
	owner           testing.TB
}

// The monitoring ServiceAccount Prometheus scrapes as (kube-prometheus' name).
const prometheusServiceAccount = "prometheus-k8s"

// StartOperator starts a control plane and the operator on it, with the chart's metrics-reader
// ClusterRole bound to Prometheus' ServiceAccount, the lab's StorageTiers and their
// StorageClasses. It returns once the operator is ready (its caches synced).
func StartOperator(t testing.TB, dir string, chart Chart) *Operator {
	t.Helper()
	env, c := testutil.ControlPlane(t)
	return RunOperator(t, dir, chart, env.Config, c, labTiers()...)
}

// RunOperator runs the operator, built from cmd/manager, as the chart's ServiceAccount with the
// chart's RBAC on the control plane of cfg, after creating the namespaces, the chart's RBAC,
// Prometheus' ServiceAccount bound to the metrics-reader ClusterRole, and fixtures. It returns
// once the operator is ready (its caches synced). The upstream harness runs it this way too.
func RunOperator(t testing.TB, dir string, chart Chart, cfg *rest.Config, c client.Client, fixtures ...client.Object) *Operator {
	t.Helper()
	bin := filepath.Join(dir, "manager")
	BuildManager(t, testutil.Root(), bin)
	return RunOperatorBinary(t, dir, bin, chart, cfg, c, fixtures...)
}

// BuildManager builds cmd/manager of the source tree at root (the working tree, or a previous
// release's, with its own go.mod) into bin. The binary is named as the container's, so that the
// field manager of its non-apply writes is "manager" whichever release built it.
func BuildManager(t testing.TB, root, bin string) {
	t.Helper()
	build := exec.Command("go", "build", "-o", bin, "./cmd/manager")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building cmd/manager in %s: %v\n%s", root, err, out)
	}
}

// RunOperatorBinary is RunOperator with a manager already built (bin): a previous release's, say.
// Run twice on one control plane (an upgrade), give each its own dir: the second leaves the
// objects the first created as they are.
func RunOperatorBinary(t testing.TB, dir, bin string, chart Chart, cfg *rest.Config, c client.Client, fixtures ...client.Object) *Operator {
	t.Helper()
	ctx := context.Background()
	o := &Operator{Client: c, Config: cfg, chart: chart}

	// The metrics certificate, for the name the ServiceMonitor verifies (its tlsConfig.serverName:
	// the metrics Service's DNS name), as the chart's metrics-tls.yaml issues it.
	certDir := filepath.Join(dir, "metrics-certs")
	serverName := chart.Monitor.Spec.Endpoints[0].ServerName()
	if serverName == "" {
		t.Fatal("the chart's ServiceMonitor names no tlsConfig.serverName")
	}
	ca, err := WriteServingCert(certDir, serverName)
	if err != nil {
		t.Fatal(err)
	}
	o.CAFile = ca

	for _, obj := range append(labFixtures(chart), fixtures...) {
		if err := c.Create(ctx, obj); client.IgnoreAlreadyExists(err) != nil {
			t.Fatalf("creating %T %s: %v", obj, obj.GetName(), err)
		}
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	o.clientset = cs
	// The operator runs as the chart's ServiceAccount, with the chart's RBAC and nothing more.
	kubeconfig := filepath.Join(dir, "operator.kubeconfig")
	if err := WriteKubeconfig(ctx, cs, cfg, chart.Pod.Namespace, chart.ServiceAccount, kubeconfig); err != nil {
		t.Fatal(err)
	}
	tok, err := cs.CoreV1().ServiceAccounts(MonitorNamespace).CreateToken(ctx, prometheusServiceAccount,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](7200)}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("a token for %s/%s: %v", MonitorNamespace, prometheusServiceAccount, err)
	}
	o.TokenFile = filepath.Join(dir, "prometheus-token")
	if err := os.WriteFile(o.TokenFile, []byte(tok.Status.Token), 0o600); err != nil {
		t.Fatal(err)
	}

	o.Address = testutil.FreePort(t)
	o.bin, o.dir, o.probe, o.owner = bin, dir, testutil.FreePort(t), t
	o.args = operatorArgs(chart, kubeconfig, o.Address, o.probe, certDir)
	o.Restart(t)
	return o
}

// Restart starts the operator again (the first time: starts it), with the same arguments, and
// waits until it is ready. Its log is operator.log, then operator-2.log and so on.
func (o *Operator) Restart(t testing.TB, extraArgs ...string) {
	t.Helper()
	if o.proc != nil && o.proc.Running() {
		t.Fatal("restarting an operator that still runs")
	}
	o.starts++
	name := "operator"
	if o.starts > 1 {
		name = fmt.Sprintf("operator-%d", o.starts)
	}
	// The process belongs to the test that ran RunOperator, not to a subtest that restarts it:
	// a subtest's end must not stop the operator the next one uses.
	cmd := exec.Command(o.bin, append(slices.Clone(o.args), extraArgs...)...)
	if len(o.Env) > 0 {
		cmd.Env = append(os.Environ(), o.Env...)
	}
	p, err := proc.Launch(o.dir, name, cmd)
	if err != nil {
		t.Fatal(err)
	}
	o.owner.Cleanup(func() { p.End(o.owner) })
	o.proc = p
	if err := waitHTTP(http.DefaultClient, o.proc, "http://"+o.probe+"/readyz", 2*time.Minute); err != nil {
		t.Fatal(err)
	}
}

// Kill ends the operator with SIGKILL, as a node's loss or the OOM killer does: no deferred
// write, no lease released. It returns once the process is gone.
func (o *Operator) Kill() {
	if o.proc.Running() {
		_ = syscall.Kill(o.proc.Pid(), syscall.SIGKILL)
		<-o.proc.Done()
	}
}

// unboundToken is a token of a ServiceAccount the API server knows but that no binding lets
// read /metrics.
func (o *Operator) unboundToken(t testing.TB) []byte {
	t.Helper()
	ctx := context.Background()
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: MonitorNamespace, Name: "not-a-metrics-reader"}}
	if err := o.Client.Create(ctx, sa); client.IgnoreAlreadyExists(err) != nil {
		t.Fatal(err)
	}
	tok, err := o.clientset.CoreV1().ServiceAccounts(sa.Namespace).CreateToken(ctx, sa.Name,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return []byte(tok.Status.Token)
}

// Apply creates p (spec only: the operator plans it and writes its status).
func (o *Operator) Apply(t testing.TB, p *v1alpha1.AnalyticsPipeline) {
	t.Helper()
	obj := &v1alpha1.AnalyticsPipeline{ObjectMeta: metav1.ObjectMeta{Namespace: p.Namespace, Name: p.Name}, Spec: *p.Spec.DeepCopy()}
	if err := o.Client.Create(context.Background(), obj); err != nil {
		t.Fatalf("creating pipeline %s/%s: %v", p.Namespace, p.Name, err)
	}
}

// Running says whether the operator's process runs: false once it exited (a lost leader
// election ends the manager, and the kubelet would start its container again).
func (o *Operator) Running() bool { return o.proc != nil && o.proc.Running() }

// Stop stops the operator (its pod gone).
func (o *Operator) Stop() { o.proc.Stop() }

// labFixtures are the objects a cluster has before the operator: the namespaces, Prometheus'
// ServiceAccount and the chart's RBAC, its metrics-reader ClusterRole bound to that ServiceAccount
// (kube-prometheus binds its Prometheus the same way).
func labFixtures(chart Chart) []client.Object {
	objs := []client.Object{}
	for _, ns := range []string{PipelineNamespace, MonitorNamespace, chart.Pod.Namespace} {
		objs = append(objs, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	}
	for _, u := range chart.RBAC {
		objs = append(objs, u.DeepCopy())
	}
	objs = append(objs,
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: MonitorNamespace, Name: prometheusServiceAccount}},
		&rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "lab-prometheus-metrics-reader"},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: chart.MetricsReader.Name},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: MonitorNamespace, Name: prometheusServiceAccount}},
		})
	return objs
}

// labTiers are the lab's StorageTiers and their StorageClasses.
func labTiers() []client.Object {
	var objs []client.Object
	for _, tier := range gen.APITiers() {
		objs = append(objs, &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: tier.Spec.StorageClassName},
			Provisioner: "kubernetes.io/no-provisioner", VolumeBindingMode: ptr.To(storagev1.VolumeBindingWaitForFirstConsumer)})
		objs = append(objs, &v1alpha1.StorageTier{ObjectMeta: metav1.ObjectMeta{Name: tier.Name}, Spec: tier.Spec})
	}
	return objs
}

// waitPlanned waits until the operator has planned p's current generation.
func (o *Operator) waitPlanned(t testing.TB, namespace, name string) *v1alpha1.AnalyticsPipeline {
	t.Helper()
	got := &v1alpha1.AnalyticsPipeline{}
	testutil.Eventually(t, 2*time.Minute, fmt.Sprintf("the operator to plan %s/%s", namespace, name), func() error {
		if err := o.Client.Get(context.Background(), client.ObjectKey{Namespace: namespace, Name: name}, got); err != nil {
			return err
		}
		if got.Status.ObservedGeneration != got.Generation || got.Status.Plan == nil {
			return fmt.Errorf("generation %d observed %d, plan %v", got.Generation, got.Status.ObservedGeneration, got.Status.Plan != nil)
		}
		return nil
	})
	return got
}

// WriteKubeconfig writes a kubeconfig for the API server of cfg that authenticates with a token
// of the ServiceAccount namespace/name, as the operator's pod does with its projected token.
func WriteKubeconfig(ctx context.Context, cs kubernetes.Interface, cfg *rest.Config, namespace, name, path string) error {
	tok, err := cs.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, name,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](7200)}}, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("a token for %s/%s: %w", namespace, name, err)
	}
	kc := clientcmdapi.NewConfig()
	kc.Clusters["lab"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos[name] = &clientcmdapi.AuthInfo{Token: tok.Status.Token}
	kc.Contexts["lab"] = &clientcmdapi.Context{Cluster: "lab", AuthInfo: name, Namespace: namespace}
	kc.CurrentContext = "lab"
	return clientcmd.WriteToFile(*kc, path)
}

// operatorArgs are the chart's arguments for the operator container, with what differs outside a
// pod: the addresses it binds (loopback ports), the metrics certificate's directory (the chart
// mounts its Secret), the kubeconfig (in a pod: the ServiceAccount's mounted token) and the
// leader election's namespace (in a pod: read from the mounted ServiceAccount namespace).
func operatorArgs(chart Chart, kubeconfig, metricsAddr, probeAddr, certDir string) []string {
	replace := map[string]string{
		"--metrics-bind-address":      metricsAddr,
		"--health-probe-bind-address": probeAddr,
		"--metrics-cert-dir":          certDir,
	}
	args := []string{"--kubeconfig=" + kubeconfig, "--leader-election-namespace=" + chart.Pod.Namespace}
	for _, a := range chart.Args {
		name, _, _ := strings.Cut(a, "=")
		if v, ok := replace[name]; ok {
			a = name + "=" + v
		}
		args = append(args, a)
	}
	return args
}
