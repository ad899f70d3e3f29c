package lab

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"
)

// generatedConfig is a configuration as the Prometheus Operator v0.93.0 generates it (trimmed
// from the lab's): a PodMonitor's job with the sharding relabelling, and a ServiceMonitor's with
// a TLS asset and a bearer token file.
const generatedConfig = `
global:
  scrape_interval: 10s
  external_labels:
    prometheus: monitoring/lab
    prometheus_replica: $(POD_NAME)
  evaluation_interval: 10s
rule_files:
- /etc/prometheus/rules/prometheus-lab-rulefiles-0/*.yaml
scrape_configs:
- job_name: podMonitor/monitoring/strata-kafka/0
  honor_labels: false
  kubernetes_sd_configs:
  - role: pod
    attach_metadata:
      node: false
  scrape_interval: 30s
  metrics_path: /metrics
  relabel_configs:
  - action: keep
    source_labels: [__meta_kubernetes_pod_label_strimzi_io_kind, __meta_kubernetes_pod_labelpresent_strimzi_io_kind]
    regex: (Kafka);true
  - source_labels: [__tmp_hash, __tmp_disable_sharding]
    regex: $(SHARD);|.+;.+
    action: keep
- job_name: serviceMonitor/strata-system/strata/0
  honor_labels: true
  kubernetes_sd_configs:
  - role: endpoints
    namespaces:
      names: [strata-system]
  scrape_interval: 30s
  scrape_timeout: 10s
  scheme: https
  tls_config:
    ca_file: /etc/prometheus/certs/0_strata-system_strata-metrics-tls_ca.crt
    server_name: strata-metrics.strata-system.svc
  bearer_token_file: /var/run/secrets/kubernetes.io/serviceaccount/token
  relabel_configs:
  - action: keep
    source_labels: [__meta_kubernetes_endpoint_port_name]
    regex: https
`

func labRewrite() Rewrite {
	return Rewrite{
		Env:        map[string]string{"POD_NAME": "prometheus-lab-0", "SHARD": "0"},
		TargetsDir: "/lab", CertsDir: "/lab/certs", RulesDir: "/lab/rules",
		Files:    map[string]string{podTokenFile: "/lab/token"},
		Interval: 5 * time.Second,
	}
}

// at reads the value at a dotted path of a configuration (a number indexes a list).
func at(t *testing.T, cfg map[string]any, path string) any {
	t.Helper()
	var v any = cfg
	for _, k := range strings.Split(path, ".") {
		switch c := v.(type) {
		case map[string]any:
			v = c[k]
		case []any:
			var i int
			if err := json.Unmarshal([]byte(k), &i); err != nil || i >= len(c) {
				t.Fatalf("%s: no item %s", path, k)
			}
			v = c[i]
		default:
			t.Fatalf("%s: %s of a %T", path, k, v)
		}
	}
	return v
}

// The lab's changes, each where a cluster would give Prometheus something the lab gives it
// otherwise; the relabelling is the operator's.
func TestRewriteChangesOnlyWhatTheLabCannotBe(t *testing.T) {
	out, discoveries, err := labRewrite().Apply([]byte(generatedConfig))
	if err != nil {
		t.Fatal(err)
	}
	var cfg, in map[string]any
	if err := yaml.Unmarshal(out, &cfg); err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal([]byte(generatedConfig), &in); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path string
		want any
	}{
		// What the config reloader expands in the pod.
		{"global.external_labels.prometheus_replica", "prometheus-lab-0"},
		{"scrape_configs.0.relabel_configs.1.regex", "0;|.+;.+"},
		// The pod's mounts.
		{"rule_files.0", "/lab/rules/prometheus-lab-rulefiles-0/*.yaml"},
		{"scrape_configs.1.tls_config.ca_file", "/lab/certs/0_strata-system_strata-metrics-tls_ca.crt"},
		{"scrape_configs.1.bearer_token_file", "/lab/token"},
		// Targets from the lab's files.
		{"scrape_configs.0.kubernetes_sd_configs", nil},
		{"scrape_configs.0.file_sd_configs.0.files", []any{"/lab/targets-0-0.json"}},
		{"scrape_configs.1.file_sd_configs.0.files", []any{"/lab/targets-1-0.json"}},
		// The lab's interval, and a timeout within it.
		{"scrape_configs.0.scrape_interval", "5s"},
		{"scrape_configs.1.scrape_interval", "5s"},
		{"scrape_configs.1.scrape_timeout", "5s"},
		// Unchanged.
		{"global.evaluation_interval", "10s"},
		{"scrape_configs.1.tls_config.server_name", "strata-metrics.strata-system.svc"},
		{"scrape_configs.0.relabel_configs.0", at(t, in, "scrape_configs.0.relabel_configs.0")},
		{"scrape_configs.1.relabel_configs", at(t, in, "scrape_configs.1.relabel_configs")},
		{"scrape_configs.1.honor_labels", true},
	} {
		if got := at(t, cfg, c.path); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s = %#v, want %#v", c.path, got, c.want)
		}
	}
	want := []Discovery{
		{Job: "podMonitor/monitoring/strata-kafka/0", Role: "pod", File: "/lab/targets-0-0.json"},
		{Job: "serviceMonitor/strata-system/strata/0", Role: "endpoints", Namespaces: []string{"strata-system"}, File: "/lab/targets-1-0.json"},
	}
	if !reflect.DeepEqual(discoveries, want) {
		t.Errorf("discoveries\n got %+v\nwant %+v", discoveries, want)
	}
	if !want[0].Covers("lab") || want[1].Covers("lab") || !want[1].Covers("strata-system") {
		t.Error("Covers: a discovery without namespaces covers all, with names only those")
	}
}

// What the lab cannot reproduce fails instead of scraping something else than a cluster would.
func TestRewriteRefusesWhatTheLabCannotServe(t *testing.T) {
	for name, c := range map[string]struct{ from, to, err string }{
		"unset variable":      {"$(SHARD)", "$(NODE_NAME)", "NODE_NAME"},
		"endpointslice role":  {"role: endpoints", "role: endpointslice", "endpointslice"},
		"role selectors":      {"  - role: pod\n", "  - role: pod\n    selectors: [{role: pod, label: a=b}]\n", "selectors"},
		"node metadata":       {"node: false", "node: true", "attach_metadata.node"},
		"an API server":       {"  - role: pod\n", "  - role: pod\n    api_server: https://k8s\n", "api_server"},
		"a pod path unmapped": {"/var/run/secrets/kubernetes.io/serviceaccount/token", "/etc/other/token", "/etc/other/token"},
	} {
		t.Run(name, func(t *testing.T) {
			in := strings.Replace(generatedConfig, c.from, c.to, 1)
			if in == generatedConfig {
				t.Fatalf("%q is not in the configuration", c.from)
			}
			if _, _, err := labRewrite().Apply([]byte(in)); err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("error %v, want one naming %s", err, c.err)
			}
		})
	}
}

// The endpoints role finds only pods behind a Service, in the discovery's namespaces, with the
// Service's and the pod's metadata; the pod role every pod's container port.
func TestTargetGroupsFollowTheRole(t *testing.T) {
	svc := &Service{Name: "strata-metrics", PortName: "https", Labels: map[string]string{"app.kubernetes.io/component": "metrics"}}
	pods := []Pod{
		{Namespace: "strata-system", Name: "op", Container: "manager", PortName: "https", Address: "127.0.0.1:2", Service: svc},
		{Namespace: "lab", Name: "broker", Container: "kafka", PortName: "tcp-prometheus", Address: "127.0.0.1:1",
			Labels: map[string]string{"strimzi.io/kind": "Kafka"}},
	}
	pod := targetGroups(Discovery{Role: "pod"}, pods)
	if len(pod) != 2 || pod[0].Labels["__meta_kubernetes_pod_label_strimzi_io_kind"] != "Kafka" ||
		pod[0].Labels["__meta_kubernetes_pod_labelpresent_strimzi_io_kind"] != "true" {
		t.Errorf("pod role: %+v", pod)
	}
	ep := targetGroups(Discovery{Role: "endpoints", Namespaces: []string{"strata-system"}}, pods)
	if len(ep) != 1 || ep[0].Targets[0] != "127.0.0.1:2" || ep[0].Labels["__meta_kubernetes_endpoint_port_name"] != "https" ||
		ep[0].Labels["__meta_kubernetes_service_label_app_kubernetes_io_component"] != "metrics" ||
		ep[0].Labels["__meta_kubernetes_pod_container_name"] != "manager" {
		t.Errorf("endpoints role: %+v", ep)
	}
	if got := targetGroups(Discovery{Role: "endpoints", Namespaces: []string{"lab"}}, pods); len(got) != 0 {
		t.Errorf("endpoints role in lab: %+v, want none (the broker has no Service)", got)
	}
}

func TestPrometheusRelease(t *testing.T) {
	for module, want := range map[string]string{"v0.315.0": "v3.15.0", "v0.300.1": "v3.0.1", "v0.400.2": "v4.0.2"} {
		if got, err := prometheusRelease(module); err != nil || got != want {
			t.Errorf("prometheusRelease(%s) = %s, %v; want %s", module, got, err, want)
		}
	}
	if _, err := prometheusRelease("v0.55.1"); err == nil {
		t.Error("v0.55.1: want an error (Prometheus 2 has no such module version)")
	}
}
