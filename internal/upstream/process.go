package upstream

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/strata-dev/strata/internal/controlplane"
	"github.com/strata-dev/strata/internal/lab"
	"github.com/strata-dev/strata/internal/testutil"
	"github.com/strata-dev/strata/internal/testutil/proc"
)

// tool is the path of a pinned binary hack/tools.sh builds (cached in bin/ after the first run):
// kube-scheduler, kube-controller-manager, kwok, eck-operator, spark-operator.
func tool(t testing.TB, name string) string {
	t.Helper()
	cmd := exec.Command(filepath.Join(testutil.Root(), "hack", "tools.sh"), "path", name)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("hack/tools.sh path %s: %v", name, err)
	}
	return strings.TrimSpace(string(out))
}

// run starts a component as a process that dies with the test, with env added to its
// environment, and returns it.
func run(t testing.TB, dir, name string, env []string, argv ...string) *proc.Process {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	return proc.Start(t, dir, name, cmd)
}

// alive fails the test when a component has exited: the harness's results mean nothing without it.
func alive(t testing.TB, ps ...*proc.Process) {
	t.Helper()
	for _, p := range ps {
		if !p.Running() {
			b, _ := os.ReadFile(p.LogFile())
			t.Fatalf("%s exited:\n%s", p.Name(), proc.Tail(b, 4096))
		}
	}
}

func flag(name, value string) string { return fmt.Sprintf("--%s=%s", name, value) }

// waitTLS waits until p accepts connections at addr (its webhook server is up), failing the test
// if p exits or two minutes pass.
func waitTLS(t testing.TB, p *proc.Process, addr string) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		alive(t, p)
		conn, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			conn.Close()
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("%s: nothing listens at %s after two minutes (log %s)", p.Name(), addr, p.LogFile())
}

// installCRDs installs the CRDs hack/tools.sh puts beside an operator's binary (its crds/
// directory) that the control plane does not have yet: the kinds the operator watches besides
// those Strata writes.
func installCRDs(ctx context.Context, t testing.TB, cfg *rest.Config, bin string) {
	t.Helper()
	if err := controlplane.InstallMissing(ctx, cfg, []string{filepath.Join(filepath.Dir(bin), "crds")}); err != nil {
		t.Fatalf("%s's CRDs: %v", filepath.Base(bin), err)
	}
}

// serviceAccountKubeconfig writes a kubeconfig with a token of the ServiceAccount
// namespace/name, bound to cluster-admin: for the operators written in Java, whose Kubernetes
// client (fabric8) cannot read the client key of envtest's admin kubeconfig ("Invalid DER:
// object is not integer"), and which authenticate with their pod's token in a cluster. Their
// charts' RBAC is not what the harness tests.
func serviceAccountKubeconfig(ctx context.Context, t testing.TB, dir string, cfg *rest.Config, c client.Client, namespace, name string) string {
	t.Helper()
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name + "-harness"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: sa.Namespace, Name: sa.Name}}}
	for _, o := range []client.Object{sa, binding} {
		if err := c.Create(ctx, o); client.IgnoreAlreadyExists(err) != nil {
			t.Fatal(err)
		}
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name+".kubeconfig")
	if err := lab.WriteKubeconfig(ctx, cs, cfg, sa.Namespace, sa.Name, path); err != nil {
		t.Fatal(err)
	}
	return path
}
