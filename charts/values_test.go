package charts_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// The chart's values: what the defaults render, where every option lands, and the schema that
// refuses what the chart cannot render.

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
