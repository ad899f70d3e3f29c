// Package charts_test checks the Helm chart in charts/strata: helm lint, helm template with the
// default values and with every option on (testdata/all-on.yaml), values.schema.json, no
// wildcard in the rendered RBAC, the restricted security context, the generated copies (CRDs and
// RBAC rules) being current, a server-side dry run of every rendered object against a real
// control plane with the upstream CRDs, and helm install / uninstall into that control plane —
// with the real manager run under the chart's ServiceAccount to prove its RBAC is enough.
//
// Helm is $HELM (make test sets it) or else `hack/tools.sh path helm`, which builds the pinned
// Helm from the Go module proxy on first use.
package charts_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
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
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
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

const (
	release        = "strata"
	namespace      = "strata-system"
	allOnRelease   = "obs"
	allOnNamespace = "strata-obs"
	allOnValues    = "testdata/all-on.yaml"
	// fullname is the chart's name prefix for release "strata" (the release name contains the
	// chart's name); allOnFullname is testdata/all-on.yaml's fullnameOverride.
	fullname      = "strata"
	allOnFullname = "strata-obs"
)

// helm returns the Helm binary: $HELM, else the pinned build of hack/tools.sh.
func helm(t *testing.T) string {
	t.Helper()
	return testutil.Tool(t, "helm", "HELM")
}

func chartDir(t *testing.T) string {
	t.Helper()
	root, err := controlplane.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(root, "charts", "strata")
}

// runHelm runs helm and returns its stdout; on failure the error carries stderr.
func runHelm(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(helm(t), args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	// Keep Helm's caches and config out of the user's home.
	tmp := t.TempDir()
	cmd.Env = append(os.Environ(), "HELM_CACHE_HOME="+tmp, "HELM_CONFIG_HOME="+tmp, "HELM_DATA_HOME="+tmp)
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("helm %s: %v\n%s%s", strings.Join(args, " "), err, stderr.String(), stdout.String())
	}
	return stdout.String(), nil
}

// kubeVersion is the pinned Kubernetes version (hack/versions.env): helm template and lint
// check the chart's kubeVersion against it rather than Helm's built-in default.
func kubeVersion(t *testing.T) string {
	t.Helper()
	root, err := controlplane.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(root, "hack", "versions.env"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		line, _, _ = strings.Cut(line, "#")
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "KUBERNETES_VERSION="); ok {
			return strings.TrimSpace(v)
		}
	}
	t.Fatal("hack/versions.env has no KUBERNETES_VERSION")
	return ""
}

// template runs helm template for the pinned Kubernetes version.
func template(t *testing.T, rel, ns string, args ...string) (string, error) {
	t.Helper()
	return runHelm(t, append([]string{"template", rel, chartDir(t), "--namespace", ns, "--kube-version", kubeVersion(t)}, args...)...)
}

// render runs helm template and decodes every object it prints.
func render(t *testing.T, rel, ns string, args ...string) []*unstructured.Unstructured {
	t.Helper()
	out, err := template(t, rel, ns, args...)
	if err != nil {
		t.Fatal(err)
	}
	objs, err := decodeAll([]byte(out))
	if err != nil {
		t.Fatalf("helm template printed invalid YAML: %v\n%s", err, out)
	}
	return objs
}

// decodeAll decodes every YAML document in b as the API machinery would: integers as int64.
func decodeAll(b []byte) ([]*unstructured.Unstructured, error) {
	var objs []*unstructured.Unstructured
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(b), 4096)
	for {
		var raw json.RawMessage
		err := dec.Decode(&raw)
		if errors.Is(err, io.EOF) {
			return objs, nil
		}
		if err != nil {
			return nil, err
		}
		if len(raw) == 0 || string(raw) == "null" {
			continue
		}
		jd := json.NewDecoder(bytes.NewReader(raw))
		jd.UseNumber()
		var obj map[string]any
		if err := jd.Decode(&obj); err != nil {
			return nil, err
		}
		if len(obj) > 0 {
			objs = append(objs, &unstructured.Unstructured{Object: wholeNumbers(obj).(map[string]any)})
		}
	}
}

// wholeNumbers turns JSON numbers into int64 where they are whole, else float64.
func wholeNumbers(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			v[k] = wholeNumbers(x)
		}
		return v
	case []any:
		for i, x := range v {
			v[i] = wholeNumbers(x)
		}
		return v
	case json.Number:
		if i, err := v.Int64(); err == nil {
			return i
		}
		f, _ := v.Float64()
		return f
	default:
		return v
	}
}

func find(objs []*unstructured.Unstructured, kind, name string) *unstructured.Unstructured {
	for _, o := range objs {
		if o.GetKind() == kind && o.GetName() == name {
			return o
		}
	}
	return nil
}

func kinds(objs []*unstructured.Unstructured) []string {
	var out []string
	for _, o := range objs {
		out = append(out, o.GetKind()+"/"+o.GetName())
	}
	slices.Sort(out)
	return out
}

func TestLint(t *testing.T) {
	for _, values := range []string{"", allOnValues} {
		args := []string{"lint", "--strict", chartDir(t), "--kube-version", kubeVersion(t)}
		if values != "" {
			args = append(args, "--values", values)
		}
		if out, err := runHelm(t, args...); err != nil {
			t.Errorf("%v", err)
		} else {
			t.Logf("%s", out)
		}
	}
}

// TestGeneratedCopies: the chart's CRDs and RBAC rules are the ones `make manifests` generates.
// (make verify catches the same in CI; this says it in `make test` too.)
func TestGeneratedCopies(t *testing.T) {
	root, err := controlplane.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	gen, _ := filepath.Glob(filepath.Join(root, "config", "crd", "bases", "*.yaml"))
	chart, _ := filepath.Glob(filepath.Join(chartDir(t), "crds", "*.yaml"))
	if len(gen) == 0 || len(gen) != len(chart) {
		t.Errorf("charts/strata/crds has %d CRDs, config/crd/bases %d: run `make manifests`", len(chart), len(gen))
	}
	pairs := map[string]string{
		filepath.Join(root, "config", "rbac", "role.yaml"): filepath.Join(chartDir(t), "files", "rbac", "role.yaml"),
	}
	for _, g := range gen {
		pairs[g] = filepath.Join(chartDir(t), "crds", filepath.Base(g))
	}
	for src, dst := range pairs {
		a, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(dst)
		if err != nil || !bytes.Equal(a, b) {
			t.Errorf("%s is not a copy of %s: run `make manifests`", dst, src)
		}
	}
}

// TestRenderDefaults renders the default values: the objects a plain `helm install` creates.
func TestRenderDefaults(t *testing.T) {
	objs := render(t, release, namespace)
	want := []string{
		"ClusterRole/strata-manager", "ClusterRole/strata-metrics-reader", "ClusterRole/strata-spark-driver",
		"ClusterRoleBinding/strata-manager",
		"Deployment/strata", "Role/strata-leader-election", "Role/strata-volume-cleanup",
		"RoleBinding/strata-leader-election", "RoleBinding/strata-volume-cleanup",
		"Secret/strata-metrics-tls", "Service/strata-metrics", "ServiceAccount/strata",
	}
	if got := kinds(objs); !reflect.DeepEqual(got, want) {
		t.Errorf("default values render\n%v\nwant\n%v", got, want)
	}
	checkRBAC(t, objs, fullname)
	checkSecurity(t, find(objs, "Deployment", fullname))
	d := find(objs, "Deployment", fullname)
	checkArgs(t, d, []string{"--leader-elect", "--leader-elect-lease-duration=15s", "--leader-elect-renew-deadline=10s",
		"--leader-elect-retry-period=2s", "--health-probe-bind-address=:8081", "--metrics-bind-address=:8443", "--zap-log-level=info",
		"--memory-target=200Mi", "--volume-cleanup-namespace=" + namespace, "--ingest-image=ghcr.io/strata-dev/strata-ingest:0.1.0"},
		// The cleanup pods' image and timeout are the manager's defaults unless set.
		[]string{"--watch-namespaces", "--allow-user-service-accounts", "--volume-cleanup-image", "--volume-cleanup-timeout"})
	checkSparkDriverRole(t, objs)
	if img := container(t, d)["image"]; img != "ghcr.io/strata-dev/strata:0.1.0" {
		t.Errorf("image %v, want the chart's appVersion as tag", img)
	}
	for _, o := range objs {
		if ns := o.GetNamespace(); ns != "" && ns != namespace {
			t.Errorf("%s/%s in namespace %q, want the release's", o.GetKind(), o.GetName(), ns)
		}
	}
}

// TestRenderAllOptions renders every option on and checks each value lands where it should.
func TestRenderAllOptions(t *testing.T) {
	objs := render(t, allOnRelease, allOnNamespace, "--values", allOnValues)
	for _, want := range []string{
		"ServiceAccount/strata-operator", "Deployment/strata-obs", "Service/strata-obs-metrics",
		"ClusterRole/strata-obs-manager", "ClusterRoleBinding/strata-obs-manager",
		"Role/strata-obs-leader-election", "RoleBinding/strata-obs-leader-election",
		"Role/strata-obs-volume-cleanup", "RoleBinding/strata-obs-volume-cleanup",
		"ClusterRole/strata-obs-metrics-reader", "ClusterRoleBinding/strata-obs-metrics-reader",
		"ServiceMonitor/strata-obs", "PrometheusRule/strata-obs",
		"PodDisruptionBudget/strata-obs", "NetworkPolicy/strata-obs", "Secret/strata-obs-metrics-tls",
	} {
		kind, name, _ := strings.Cut(want, "/")
		if find(objs, kind, name) == nil {
			t.Errorf("no %s in %v", want, kinds(objs))
		}
	}
	checkRBAC(t, objs, allOnFullname)
	d := find(objs, "Deployment", allOnFullname)
	if d == nil {
		t.Fatal("no Deployment")
	}
	checkSecurity(t, d)
	checkArgs(t, d, []string{"--leader-elect", "--leader-elect-lease-duration=20s", "--leader-elect-renew-deadline=12s",
		"--leader-elect-retry-period=3s", "--health-probe-bind-address=:9081", "--metrics-bind-address=:9443",
		"--zap-log-level=debug", "--memory-target=0", "--watch-namespaces=team-a,team-b",
		`--prometheus-allowed-url=https://prometheus-operated\.monitoring(\.svc)?:9090`,
		"--prometheus-bearer-token-file=/etc/strata/prometheus/token/token",
		"--prometheus-ca-file=/etc/strata/prometheus/ca/ca.crt",
		"--prometheus-query-timeout=3s", "--prometheus-read-deadline=15s",
		"--ingest-image=registry.example/strata-ingest:1.2.3", "--allow-user-service-accounts",
		"--volume-cleanup-namespace=" + allOnNamespace, "--volume-cleanup-image=registry.example/busybox:1.37.0",
		"--volume-cleanup-timeout=30m"}, nil)
	checkSparkDriverRole(t, objs)
	vols, _, _ := unstructured.NestedSlice(d.Object, "spec", "template", "spec", "volumes")
	if len(vols) != 3 || !strings.Contains(fmt.Sprint(vols), "prometheus-reader") || !strings.Contains(fmt.Sprint(vols), "prometheus-ca") {
		t.Errorf("the Prometheus token and CA Secrets are not mounted: volumes %v", vols)
	}
	c := container(t, d)
	expect := func(what string, got any, path ...string) {
		t.Helper()
		want, _, _ := unstructured.NestedFieldNoCopy(d.Object, path...)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %v in the Deployment (%v), want %v", what, want, path, got)
		}
	}
	values := readValues(t, allOnValues)
	expect("replicaCount", int64(2), "spec", "replicas")
	expect("nodeSelector", values["nodeSelector"], "spec", "template", "spec", "nodeSelector")
	expect("tolerations", values["tolerations"], "spec", "template", "spec", "tolerations")
	expect("affinity", values["affinity"], "spec", "template", "spec", "affinity")
	expect("topologySpreadConstraints", values["topologySpreadConstraints"], "spec", "template", "spec", "topologySpreadConstraints")
	expect("imagePullSecrets", values["imagePullSecrets"], "spec", "template", "spec", "imagePullSecrets")
	expect("priorityClassName", "platform-critical", "spec", "template", "spec", "priorityClassName")
	if env := c["env"]; !reflect.DeepEqual(env, []any{map[string]any{"name": "GOGC", "value": "50"}}) {
		t.Errorf("env %v, want GOGC=50 from goGC", env)
	}
	expect("serviceAccount.name", "strata-operator", "spec", "template", "spec", "serviceAccountName")
	expect("podLabels", "platform", "spec", "template", "metadata", "labels", "team")
	expect("podAnnotations", "platform", "spec", "template", "metadata", "annotations", "example.com/owner")
	if !reflect.DeepEqual(c["resources"], values["resources"]) {
		t.Errorf("resources %v, want %v", c["resources"], values["resources"])
	}
	if img := c["image"]; img != "registry.example/strata@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef" {
		t.Errorf("image %v, want the digest to win over the tag", img)
	}
	if c["imagePullPolicy"] != "Always" {
		t.Errorf("imagePullPolicy %v", c["imagePullPolicy"])
	}

	// Extra labels and annotations on each optional object.
	for _, o := range []struct{ kind, name, label, annotation string }{
		{"ServiceMonitor", "strata-obs", "release", "example.com/monitor"},
		{"PrometheusRule", "strata-obs", "release", "example.com/rules"},
		{"Service", "strata-obs-metrics", "scrape", "example.com/metrics"},
		{"ServiceAccount", "strata-operator", "", "example.com/role"},
	} {
		obj := find(objs, o.kind, o.name)
		if obj == nil {
			continue
		}
		if _, ok := obj.GetLabels()[o.label]; o.label != "" && !ok {
			t.Errorf("%s/%s: no label %s in %v", o.kind, o.name, o.label, obj.GetLabels())
		}
		if _, ok := obj.GetAnnotations()[o.annotation]; !ok {
			t.Errorf("%s/%s: no annotation %s in %v", o.kind, o.name, o.annotation, obj.GetAnnotations())
		}
	}
	// One ConfigMap per dashboard in files/dashboards, holding it unchanged.
	dashboards, _ := filepath.Glob(filepath.Join(chartDir(t), "files", "dashboards", "*.json"))
	if len(dashboards) == 0 {
		t.Error("no dashboards in files/dashboards")
	}
	for _, path := range dashboards {
		file := filepath.Base(path)
		name := "strata-obs-dashboard-" + strings.TrimSuffix(file, ".json")
		cm := find(objs, "ConfigMap", name)
		if cm == nil {
			t.Errorf("no ConfigMap %s for %s", name, file)
			continue
		}
		if cm.GetNamespace() != "monitoring" {
			t.Errorf("%s in namespace %q, want dashboards.namespace", name, cm.GetNamespace())
		}
		for _, k := range []string{"grafana_dashboard", "release"} {
			if _, ok := cm.GetLabels()[k]; !ok {
				t.Errorf("%s: no label %s in %v", name, k, cm.GetLabels())
			}
		}
		if cm.GetAnnotations()["grafana_folder"] != "Strata" {
			t.Errorf("%s: annotations %v, want dashboards.annotations", name, cm.GetAnnotations())
		}
		data, _, _ := unstructured.NestedString(cm.Object, "data", file)
		want, _ := os.ReadFile(path)
		if strings.TrimSpace(data) != strings.TrimSpace(string(want)) {
			t.Errorf("%s: data[%s] is not files/dashboards/%s", name, file, file)
		}
		var dash map[string]any
		if err := json.Unmarshal([]byte(data), &dash); err != nil || dash["uid"] == nil || dash["title"] == nil {
			t.Errorf("%s: not a dashboard with a uid and a title: %v", file, err)
		}
	}
	if pr := find(objs, "PrometheusRule", "strata-obs"); pr != nil {
		b, _ := pr.MarshalJSON()
		if bytes.Contains(b, []byte("__STRATA_")) {
			t.Errorf("PrometheusRule keeps a placeholder: %s", b)
		}
		if !bytes.Contains(b, []byte(`job=\"strata-obs-metrics\"`)) || !bytes.Contains(b, []byte(`namespace=\"strata-obs\"`)) {
			t.Errorf("PrometheusRule does not select the metrics Service's job in the release's namespace: %s", b)
		}
	}
	if sm := find(objs, "ServiceMonitor", "strata-obs"); sm != nil {
		svc := find(objs, "Service", "strata-obs-metrics")
		sel, _, _ := unstructured.NestedStringMap(sm.Object, "spec", "selector", "matchLabels")
		for k, v := range sel {
			if svc.GetLabels()[k] != v {
				t.Errorf("the ServiceMonitor selects %s=%s, which the metrics Service does not have", k, v)
			}
		}
	}
}

// TestValuesSchema: values.schema.json turns bad values into an error naming the value.
func TestValuesSchema(t *testing.T) {
	for _, tc := range []struct {
		name string
		set  []string
		want string
	}{
		{"a string replica count", []string{"--set-string", "replicaCount=two"}, "replicaCount"},
		{"an unknown top-level key", []string{"--set", "replicas=2"}, "replicas"},
		{"an unknown nested key", []string{"--set", "metrics.tls=true"}, "tls"},
		{"a log level zap does not know", []string{"--set", "logLevel=verbose"}, "logLevel"},
		{"an invalid namespace name", []string{"--set", "watchNamespaces={Team_A}"}, "watchNamespaces"},
		{"a pull policy Kubernetes does not know", []string{"--set", "image.pullPolicy=Sometimes"}, "pullPolicy"},
		{"a port out of range", []string{"--set", "metrics.port=70000"}, "port"},
		{"a malformed scrape interval", []string{"--set", "serviceMonitor.interval=often"}, "interval"},
		{"a volume cleanup timeout that is no duration", []string{"--set", "volumeCleanup.timeout=15"}, "timeout"},
		{"a GOGC of 0", []string{"--set", "goGC=0"}, "goGC"},
		{"a memory target that is no quantity", []string{"--set", "memoryTarget=lots"}, "memoryTarget"},
		{"a memory target in bytes as a number", []string{"--set", "memoryTarget=209715200"}, "memoryTarget"},
		{"a GOGC that is no number", []string{"--set", "goGC=half"}, "goGC"},
		{"replicas without leader election", []string{"--set", "replicaCount=2", "--set", "leaderElection.enabled=false"}, "leaderElection"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := template(t, release, namespace, tc.set...)
			if err == nil {
				t.Fatalf("helm template %v succeeded, want an error naming %s", tc.set, tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error does not name %s:\n%v", tc.want, err)
			}
			t.Logf("%v", err)
		})
	}
}

// checkSparkDriverRole: the ClusterRole the operator binds for each pipeline's Spark driver has
// the name the operator may bind (desired.SparkDriverClusterRole, the generated rule's
// resourceNames) and exactly the rules of the Spark operator's Role for Spark jobs
// (kubeflow/spark-operator v2.5.2, charts/spark-operator-chart/templates/spark/rbac.yaml).
func checkSparkDriverRole(t *testing.T, objs []*unstructured.Unstructured) {
	t.Helper()
	role := find(objs, "ClusterRole", desired.SparkDriverClusterRole)
	if role == nil {
		t.Fatalf("no ClusterRole %s", desired.SparkDriverClusterRole)
	}
	want := []any{map[string]any{
		"apiGroups": []any{""},
		"resources": []any{"pods", "configmaps", "persistentvolumeclaims", "services"},
		"verbs":     []any{"get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"},
	}}
	if got := role.Object["rules"]; !reflect.DeepEqual(got, want) {
		t.Errorf("ClusterRole %s rules %v, want the Spark operator's %v", desired.SparkDriverClusterRole, got, want)
	}
	var manager *unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() == "ClusterRole" && strings.HasSuffix(o.GetName(), "-manager") {
			manager = o
		}
	}
	if manager == nil {
		t.Fatal("no manager ClusterRole")
	}
	rules, _, _ := unstructured.NestedSlice(manager.Object, "rules")
	bind := false
	for _, r := range rules {
		m := r.(map[string]any)
		if fmt.Sprint(m["resources"]) == "[clusterroles]" {
			bind = fmt.Sprint(m["verbs"]) == "[bind]" && fmt.Sprint(m["resourceNames"]) == "["+desired.SparkDriverClusterRole+"]"
			if !bind {
				t.Errorf("the operator's rule on clusterroles is %v, want only bind on %s", m, desired.SparkDriverClusterRole)
			}
		}
		for _, res := range m["resources"].([]any) {
			// (persistentvolumeclaims it holds for the ingestion job's checkpoint claim; pods it
			// only reads, to report those the scheduler cannot place: PodsScheduled.)
			if res == "services" || (res == "pods" && fmt.Sprint(m["verbs"]) != "[get list watch]") {
				t.Errorf("the operator holds %v on %s itself: it should only bind the driver's role", m["verbs"], res)
			}
		}
	}
	if !bind {
		t.Errorf("the operator may not bind ClusterRole %s", desired.SparkDriverClusterRole)
	}
}

// checkRBAC: no wildcard anywhere, and the operator's rules are exactly the generated ones.
func checkRBAC(t *testing.T, objs []*unstructured.Unstructured, prefix string) {
	t.Helper()
	for _, o := range objs {
		if o.GetKind() != "Role" && o.GetKind() != "ClusterRole" {
			continue
		}
		rules, _, _ := unstructured.NestedSlice(o.Object, "rules")
		if len(rules) == 0 {
			t.Errorf("%s/%s has no rules", o.GetKind(), o.GetName())
		}
		for _, r := range rules {
			for field, v := range r.(map[string]any) {
				for _, s := range v.([]any) {
					if strings.Contains(s.(string), "*") {
						t.Errorf("%s/%s: wildcard %q in %s", o.GetKind(), o.GetName(), s, field)
					}
				}
			}
		}
	}
	root, _ := controlplane.RepoRoot()
	gen, err := controlplane.ReadObjects(filepath.Join(root, "config", "rbac", "role.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range gen {
		if g.GetKind() == "Role" {
			checkNamespaceRoles(t, objs, prefix, g)
			continue
		}
		name := prefix + "-manager"
		got := find(objs, g.GetKind(), name)
		if got == nil {
			t.Errorf("no %s/%s for the generated %s", g.GetKind(), name, g.GetKind())
			continue
		}
		if !reflect.DeepEqual(got.Object["rules"], g.Object["rules"]) {
			t.Errorf("%s/%s rules differ from config/rbac/role.yaml's %s", g.GetKind(), name, g.GetKind())
		}
	}
}

// checkNamespaceRoles: the generated Role (the operator's rights in its own namespace) is split
// by purpose into two Roles, each bound to the operator: "-volume-cleanup" holds exactly its
// pods rule, "-leader-election" the rest (the Lease and its Events), and together they hold
// exactly the generated rules.
func checkNamespaceRoles(t *testing.T, objs []*unstructured.Unstructured, prefix string, gen *unstructured.Unstructured) {
	t.Helper()
	want, _, _ := unstructured.NestedSlice(gen.Object, "rules")
	var union []any
	for _, name := range []string{prefix + "-leader-election", prefix + "-volume-cleanup"} {
		role := find(objs, "Role", name)
		if role == nil {
			t.Errorf("no Role/%s for the generated Role", name)
			continue
		}
		if find(objs, "RoleBinding", name) == nil {
			t.Errorf("no RoleBinding/%s", name)
		}
		rules, _, _ := unstructured.NestedSlice(role.Object, "rules")
		for _, r := range rules {
			pods := slices.Contains(r.(map[string]any)["resources"].([]any), any("pods"))
			if pods != strings.HasSuffix(name, "-volume-cleanup") {
				t.Errorf("Role/%s holds the rule %v: the pods rule belongs to the volume cleanup's Role, every other to leader election's", name, r)
			}
		}
		union = append(union, rules...)
	}
	key := func(rules []any) []string {
		out := make([]string, len(rules))
		for i, r := range rules {
			out[i] = fmt.Sprint(r)
		}
		slices.Sort(out)
		return out
	}
	if got, w := key(union), key(want); !reflect.DeepEqual(got, w) {
		t.Errorf("the namespace Roles' rules %v differ from config/rbac/role.yaml's Role %v", got, w)
	}
}

func container(t *testing.T, d *unstructured.Unstructured) map[string]any {
	t.Helper()
	cs, _, _ := unstructured.NestedSlice(d.Object, "spec", "template", "spec", "containers")
	if len(cs) != 1 {
		t.Fatalf("%d containers, want 1", len(cs))
	}
	return cs[0].(map[string]any)
}

// checkSecurity: the Pod Security Standards "restricted" profile, field by field (the install
// test also has the API server's PodSecurity admission judge the pod).
func checkSecurity(t *testing.T, d *unstructured.Unstructured) {
	t.Helper()
	if d == nil {
		t.Fatal("no Deployment")
	}
	pod, _, _ := unstructured.NestedMap(d.Object, "spec", "template", "spec")
	c := container(t, d)
	for _, f := range []struct {
		obj  map[string]any
		path []string
		want any
	}{
		{pod, []string{"securityContext", "runAsNonRoot"}, true},
		{pod, []string{"securityContext", "seccompProfile", "type"}, "RuntimeDefault"},
		{c, []string{"securityContext", "runAsNonRoot"}, true},
		{c, []string{"securityContext", "allowPrivilegeEscalation"}, false},
		{c, []string{"securityContext", "privileged"}, false},
		{c, []string{"securityContext", "readOnlyRootFilesystem"}, true},
		{c, []string{"securityContext", "capabilities", "drop"}, []any{"ALL"}},
		{c, []string{"securityContext", "seccompProfile", "type"}, "RuntimeDefault"},
		{c, []string{"securityContext", "capabilities", "add"}, nil},
		{pod, []string{"hostNetwork"}, nil},
		{pod, []string{"hostPID"}, nil},
	} {
		got, _, _ := unstructured.NestedFieldNoCopy(f.obj, f.path...)
		if !reflect.DeepEqual(got, f.want) {
			t.Errorf("%s = %v, want %v", strings.Join(f.path, "."), got, f.want)
		}
	}
	// Only Secrets are mounted (the metrics certificate, the Prometheus credentials): no host path,
	// no writable volume.
	vols, _, _ := unstructured.NestedSlice(pod, "volumes")
	for _, v := range vols {
		m, _ := v.(map[string]any)
		if _, ok := m["secret"]; !ok || len(m) != 2 {
			t.Errorf("volume %v: only Secrets may be mounted", m)
		}
	}
	if uid, _, _ := unstructured.NestedInt64(pod, "securityContext", "runAsUser"); uid == 0 {
		t.Errorf("runAsUser %d, want a non-root user", uid)
	}
	for _, probe := range []string{"livenessProbe", "readinessProbe"} {
		if _, ok := c[probe]; !ok {
			t.Errorf("no %s", probe)
		}
	}
	if cmd, _, _ := unstructured.NestedStringSlice(c, "command"); !reflect.DeepEqual(cmd, []string{"/manager"}) {
		t.Errorf("command %v, want the image's /manager", cmd)
	}
}

func checkArgs(t *testing.T, d *unstructured.Unstructured, want, absent []string) {
	t.Helper()
	args, _, _ := unstructured.NestedStringSlice(container(t, d), "args")
	for _, w := range want {
		if !slices.Contains(args, w) {
			t.Errorf("args %v lack %s", args, w)
		}
	}
	for _, a := range absent {
		for _, arg := range args {
			if strings.HasPrefix(arg, a) {
				t.Errorf("args %v have %s", args, arg)
			}
		}
	}
}

func readValues(t *testing.T, path string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// Decoded as the rendered objects are: numbers become int64 or float64.
	objs, err := decodeAll(b)
	if err != nil || len(objs) != 1 {
		t.Fatalf("%s: %v", path, err)
	}
	return objs[0].Object
}

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
