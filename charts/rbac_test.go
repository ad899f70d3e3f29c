package charts_test

import (
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/strata-dev/strata/internal/controlplane"
	"github.com/strata-dev/strata/internal/desired"
)

// Checks of the rendered RBAC, pod security and arguments, shared by the tests that render.

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
