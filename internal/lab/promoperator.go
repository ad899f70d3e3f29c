package lab

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/yaml"

	"github.com/strata-dev/strata/internal/controlplane"
	"github.com/strata-dev/strata/internal/testutil"
	"github.com/strata-dev/strata/internal/testutil/proc"
)

// labPrometheus is the name of the lab's Prometheus object (in MonitorNamespace): the operator
// writes its configuration into the Secret prometheus-lab, its rule files into the ConfigMaps
// prometheus-lab-rulefiles-<n>, its TLS assets into prometheus-lab-tls-assets-<n>
// (pkg/prometheus/common.go ConfigSecretName and TLSAssetsSecretName, pkg/operator/rules.go
// configMapNameAt), and its StatefulSet's pod would be prometheus-lab-0.
const labPrometheus = "lab"

// prometheusPrefix is pkg/prometheus/common.go PrefixedName of the lab's Prometheus.
const prometheusPrefix = "prometheus-" + labPrometheus

// Generated is what the Prometheus Operator wrote for the lab's Prometheus: the configuration
// (the config Secret's prometheus.yaml.gz, gunzipped), the rule files (rulefiles ConfigMap →
// key → content) and the TLS assets (the tls-assets Secrets' keys).
type Generated struct {
	Config    []byte
	RuleFiles map[string]map[string][]byte
	TLSAssets map[string][]byte
}

// GeneratePrometheusConfig runs the Prometheus Operator (v0.93.0, hack/tools.sh's build, or
// $STRATA_PROMETHEUS_OPERATOR with its crds/ folder beside it) on the control plane of op, applies
// objects (monitors, PrometheusRules, the Secrets their tlsConfig names) and a Prometheus
// selecting every monitor and rule in every namespace, scraping and evaluating every interval,
// and returns what the operator generated once it covers every monitor's endpoints and every
// PrometheusRule. Without a kubelet, no Prometheus pod runs: the lab's Prometheus reads these.
func GeneratePrometheusConfig(t testing.TB, dir string, op *Operator, interval time.Duration, objects ...client.Object) Generated {
	t.Helper()
	ctx := context.Background()
	bin := testutil.Tool(t, "prometheus-operator", "STRATA_PROMETHEUS_OPERATOR")
	// envtest's CRD installer logs through controller-runtime's logger, which prints a stack when
	// nothing was set (as in internal/upstream's Start); the operator's own log is what a failure
	// needs.
	logf.SetLogger(logr.Discard())
	// The kinds it reconciles beyond the three vendored in third_party/upstream-crds (the
	// Prometheus kind above all); it finds which are installed when it starts.
	if err := controlplane.InstallMissing(ctx, op.Config, []string{filepath.Join(filepath.Dir(bin), "crds")}); err != nil {
		t.Fatalf("the Prometheus Operator's CRDs: %v", err)
	}
	c := op.Client
	// It runs as a ServiceAccount bound to cluster-admin, as the upstream harness runs the other
	// upstream operators: its RBAC is not what the lab tests.
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: MonitorNamespace, Name: "prometheus-operator"}}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "lab-prometheus-operator"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: sa.Namespace, Name: sa.Name}}}
	for _, o := range []client.Object{sa, binding} {
		if err := c.Create(ctx, o); client.IgnoreAlreadyExists(err) != nil {
			t.Fatal(err)
		}
	}
	kubeconfig := filepath.Join(dir, "prometheus-operator.kubeconfig")
	if err := WriteKubeconfig(ctx, op.clientset, op.Config, sa.Namespace, sa.Name, kubeconfig); err != nil {
		t.Fatal(err)
	}
	// cmd/operator/main.go takes no --kubeconfig: pkg/k8s/k8s.go NewClusterConfig reads $KUBECONFIG.
	// Its web server (metrics, /healthz) binds a loopback port instead of :8080.
	addr := testutil.FreePort(t)
	cmd := exec.Command(bin, "--web.listen-address="+addr, "--log-level=info")
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig)
	p := start(t, dir, "prometheus-operator", cmd)

	// The objects strictly validated against the CRDs (the API server's default only warns
	// about an unknown field, and prunes it).
	for _, o := range objects {
		if err := c.Create(ctx, o, client.FieldValidation(metav1.FieldValidationStrict)); client.IgnoreAlreadyExists(err) != nil {
			t.Fatalf("creating %s %s/%s: %v", o.GetObjectKind().GroupVersionKind().Kind, o.GetNamespace(), o.GetName(), err)
		}
	}
	prom, err := labPrometheusObject(interval)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, prom, client.FieldValidation(metav1.FieldValidationStrict)); err != nil {
		t.Fatalf("creating the Prometheus: %v", err)
	}

	var want []string
	rules := 0
	for _, o := range objects {
		if u, ok := o.(*unstructured.Unstructured); ok && u.GroupVersionKind().Group == monitoringGroup {
			switch u.GetKind() {
			case "PodMonitor", "ServiceMonitor":
				want = append(want, jobNames(u)...)
			case "PrometheusRule":
				rules++
			}
		}
	}
	var g Generated
	deadline := time.Now().Add(3 * time.Minute)
	for {
		if !p.Running() {
			b, _ := os.ReadFile(p.LogFile())
			t.Fatalf("the Prometheus Operator exited:\n%s", proc.Tail(b, 4096))
		}
		if g, err = readGenerated(ctx, c, want, rules); err == nil {
			return g
		}
		if time.Now().After(deadline) {
			t.Fatalf("the Prometheus Operator's configuration after 3 minutes: %v (its log: %s)", err, p.LogFile())
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// labPrometheusObject is the lab's Prometheus: the version the lab runs (so the operator
// generates what that version reads), one shard, the lab's intervals, and every ServiceMonitor,
// PodMonitor and PrometheusRule of every namespace selected (the lab applies only Strata's and
// its own).
func labPrometheusObject(interval time.Duration) (*unstructured.Unstructured, error) {
	versions, err := controlplane.Versions()
	if err != nil {
		return nil, err
	}
	version, err := prometheusRelease(versions["PROMETHEUS_VERSION"])
	if err != nil {
		return nil, err
	}
	p := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": monitoringGroup + "/v1", "kind": "Prometheus",
		"metadata": map[string]any{"namespace": MonitorNamespace, "name": labPrometheus},
		"spec": map[string]any{
			"version":            version,
			"serviceAccountName": prometheusServiceAccount,
			"scrapeInterval":     interval.String(),
			"scrapeTimeout":      interval.String(),
			"evaluationInterval": interval.String(),
		},
	}}
	for _, sel := range []string{"serviceMonitor", "podMonitor", "rule"} {
		p.Object["spec"].(map[string]any)[sel+"Selector"] = map[string]any{}
		p.Object["spec"].(map[string]any)[sel+"NamespaceSelector"] = map[string]any{}
	}
	return p, nil
}

// prometheusRelease is the Prometheus release of its Go module's version: v0.315.0 is v3.15.0
// (Prometheus 3 tags its module v0.<major><minor, two digits>.<patch>).
func prometheusRelease(module string) (string, error) {
	var minor, patch int
	if _, err := fmt.Sscanf(module, "v0.%d.%d", &minor, &patch); err != nil || minor < 300 {
		return "", fmt.Errorf("PROMETHEUS_VERSION %q is not a Prometheus 3 module version", module)
	}
	return fmt.Sprintf("v%d.%d.%d", minor/100, minor%100, patch), nil
}

// readGenerated reads the operator's output for the lab's Prometheus, or says what is missing
// yet: a job of want, rules PrometheusRules' files, a TLS asset the configuration names.
func readGenerated(ctx context.Context, c client.Client, want []string, rules int) (Generated, error) {
	g := Generated{RuleFiles: map[string]map[string][]byte{}, TLSAssets: map[string][]byte{}}
	s := &corev1.Secret{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: MonitorNamespace, Name: prometheusPrefix}, s); err != nil {
		return g, err
	}
	gz, ok := s.Data["prometheus.yaml.gz"] // pkg/prometheus/common.go ConfigFilename
	if !ok {
		return g, fmt.Errorf("secret %s has no prometheus.yaml.gz", s.Name)
	}
	r, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return g, err
	}
	if g.Config, err = io.ReadAll(r); err != nil {
		return g, err
	}
	var cfg struct {
		ScrapeConfigs []struct {
			JobName string `json:"job_name"`
		} `json:"scrape_configs"`
	}
	if err := yaml.Unmarshal(g.Config, &cfg); err != nil {
		return g, err
	}
	var jobs []string
	for _, sc := range cfg.ScrapeConfigs {
		jobs = append(jobs, sc.JobName)
	}
	for _, j := range want {
		if !slices.Contains(jobs, j) {
			return g, fmt.Errorf("no job %s in the generated configuration (jobs: %v)", j, jobs)
		}
	}

	cms := &corev1.ConfigMapList{}
	if err := c.List(ctx, cms, client.InNamespace(MonitorNamespace)); err != nil {
		return g, err
	}
	files := 0
	for _, cm := range cms.Items {
		if strings.HasPrefix(cm.Name, prometheusPrefix+"-rulefiles-") {
			g.RuleFiles[cm.Name] = map[string][]byte{}
			for k, v := range cm.Data {
				g.RuleFiles[cm.Name][k] = []byte(v)
				files++
			}
		}
	}
	if files < rules {
		return g, fmt.Errorf("%d rule files in the rulefiles ConfigMaps, want one per PrometheusRule (%d)", files, rules)
	}

	secrets := &corev1.SecretList{}
	if err := c.List(ctx, secrets, client.InNamespace(MonitorNamespace)); err != nil {
		return g, err
	}
	for _, s := range secrets.Items {
		if strings.HasPrefix(s.Name, prometheusPrefix+"-tls-assets-") {
			for k, v := range s.Data {
				g.TLSAssets[k] = v
			}
		}
	}
	for _, asset := range tlsAssetsNamed(g.Config) {
		if _, ok := g.TLSAssets[asset]; !ok {
			have := make([]string, 0, len(g.TLSAssets))
			for k := range g.TLSAssets {
				have = append(have, k)
			}
			sort.Strings(have)
			return g, fmt.Errorf("the configuration names the TLS asset %s, the tls-assets Secrets hold %v", asset, have)
		}
	}
	return g, nil
}

// tlsAssetsNamed are the files under /etc/prometheus/certs a configuration names.
func tlsAssetsNamed(config []byte) []string {
	var out []string
	for _, line := range strings.Split(string(config), "\n") {
		if _, after, ok := strings.Cut(line, podCertsDir); ok {
			out = append(out, strings.Trim(strings.TrimSpace(after), `"'`))
		}
	}
	return out
}
