package upstream

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/strata-dev/strata/internal/controlplane"
	"github.com/strata-dev/strata/internal/testutil"
	"github.com/strata-dev/strata/internal/testutil/proc"
)

// StrimziNamespace is the cluster operator's namespace.
const StrimziNamespace = "strimzi"

// EnvStrimzi names a Strimzi build (hack/strimzi.sh's output) to use instead of bin/'s.
const EnvStrimzi = "STRATA_STRIMZI"

// StrimziBuild is the directory of the cluster operator's build (hack/strimzi.sh: lib/, crds/,
// deployment.yaml), "" when there is none: Strimzi's cluster operator is not published as a jar,
// and building it needs its source from GitHub.
func StrimziBuild(t testing.TB) string {
	t.Helper()
	if dir := os.Getenv(EnvStrimzi); dir != "" {
		return dir
	}
	versions, err := controlplane.Versions()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(testutil.Root(), "bin", "strimzi-"+versions["STRIMZI_VERSION"])
	if _, err := os.Stat(filepath.Join(dir, ".built")); err != nil {
		return ""
	}
	return dir
}

// EnvTopicOperator and EnvUserOperator name directories of the Topic and User Operators' jars
// (hack/strimzi.sh's topic-operator/lib and user-operator/lib) to use instead of bin/'s.
const (
	EnvTopicOperator = "STRATA_STRIMZI_TOPIC_OPERATOR"
	EnvUserOperator  = "STRATA_STRIMZI_USER_OPERATOR"
)

// TopicOperatorBuild is the directory of Strimzi's Topic Operator's jar and its dependencies,
// "" when there is none: like the cluster operator, it is not published as a jar.
func TopicOperatorBuild(t testing.TB) string {
	t.Helper()
	return operatorBuild(t, EnvTopicOperator, "topic-operator")
}

// UserOperatorBuild is the directory of Strimzi's User Operator's jar and its dependencies, ""
// when there is none.
func UserOperatorBuild(t testing.TB) string {
	t.Helper()
	return operatorBuild(t, EnvUserOperator, "user-operator")
}

// operatorBuild is $env, or <the Strimzi build>/<name>/lib when it holds the operator's jar.
func operatorBuild(t testing.TB, env, name string) string {
	t.Helper()
	if dir := os.Getenv(env); dir != "" {
		return dir
	}
	build := os.Getenv(EnvStrimzi)
	if build == "" {
		versions, err := controlplane.Versions()
		if err != nil {
			t.Fatal(err)
		}
		build = filepath.Join(testutil.Root(), "bin", "strimzi-"+versions["STRIMZI_VERSION"])
	}
	dir := filepath.Join(build, name, "lib")
	if matches, _ := filepath.Glob(filepath.Join(dir, name+"-*.jar")); len(matches) == 0 {
		return ""
	}
	return dir
}

// startStrimzi runs Strimzi's cluster operator from build for the namespaces, with the
// environment of its own Deployment (images, timeouts) but leader election, and its CRDs
// (StrimziPodSet and the kinds Strata does not write). It authenticates with a ServiceAccount
// token, as spark-submit does (fabric8's client).
func startStrimzi(ctx context.Context, t testing.TB, dir, build string, cfg *rest.Config, c client.Client, namespaces []string) *proc.Process {
	t.Helper()
	if err := controlplane.InstallMissing(ctx, cfg, []string{filepath.Join(build, "crds")}); err != nil {
		t.Fatalf("Strimzi's CRDs: %v", err)
	}
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: StrimziNamespace}}); client.IgnoreAlreadyExists(err) != nil {
		t.Fatal(err)
	}
	kubeconfig := serviceAccountKubeconfig(ctx, t, dir, cfg, c, StrimziNamespace, "strimzi-cluster-operator")
	env := strimziEnv(t, build)
	env = append(env, "KUBECONFIG="+kubeconfig,
		"STRIMZI_NAMESPACE="+strings.Join(namespaces, ","),
		"STRIMZI_OPERATOR_NAMESPACE="+StrimziNamespace,
		"STRIMZI_LEADER_ELECTION_ENABLED=false",
		"STRIMZI_FULL_RECONCILIATION_INTERVAL_MS=20000",
		"KUBERNETES_SERVICE_DNS_DOMAIN=cluster.local")
	lockStrimziPort(t)
	java := filepath.Join(strimziJavaHome(), "bin", "java")
	return run(t, dir, "strimzi-cluster-operator", env, java, "-Xmx384m",
		"-cp", filepath.Join(build, "lib", "*"), "io.strimzi.operator.cluster.Main")
}

// strimziJavaHome is the Java Strimzi 1.2 needs (21 or newer).
func strimziJavaHome() string {
	if h := os.Getenv("STRIMZI_JAVA_HOME"); h != "" {
		return h
	}
	return "/usr/lib/jvm/temurin-25-jdk-amd64"
}

// strimziEnv is the cluster operator container's environment with plain values in Strimzi's
// own Deployment (packaging/install/cluster-operator/060-Deployment-strimzi-cluster-operator.yaml).
func strimziEnv(t testing.TB, build string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(build, "deployment.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var d appsv1.Deployment
	if err := yaml.Unmarshal(b, &d); err != nil {
		t.Fatalf("Strimzi's Deployment: %v", err)
	}
	var env []string
	for _, e := range d.Spec.Template.Spec.Containers[0].Env {
		if e.ValueFrom == nil && !strings.HasPrefix(e.Name, "STRIMZI_LEADER_ELECTION") {
			env = append(env, e.Name+"="+e.Value)
		}
	}
	return env
}

// lockStrimziPort waits until no other test process on this machine runs Strimzi's cluster
// operator, and holds the machine until the test ends: its health server listens on port 8080,
// fixed in its code (cluster-operator/src/main/java/io/strimzi/operator/cluster/Main.java,
// HEALTH_SERVER_PORT), and a second one fails to start. `go test ./...` runs packages at once,
// so two harnesses would otherwise meet there. The Topic Operator's is 8080 too
// (topic-operator/.../TopicOperator.java, HEALTH_CHECK_PORT). The lock goes with the process if
// it dies.
func lockStrimziPort(t testing.TB) { lockPort(t, 8080, "Strimzi's cluster operator or Topic Operator") }

// lockPort holds the machine's port (by a lock file: the port itself is the process's) until the
// test ends, waiting for another test process that holds it for what.
func lockPort(t testing.TB, port int, what string) {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(os.TempDir(), fmt.Sprintf("strata-strimzi-port-%d.lock", port)), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Logf("waiting for another test's %s to end (its port %d is fixed)", what, port)
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
			t.Fatal(err)
		}
	}
	// Registered before the process's own cleanup, so run after it: the port is free by then.
	t.Cleanup(func() { _ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN); f.Close() })
}
