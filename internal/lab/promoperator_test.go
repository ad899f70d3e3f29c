package lab

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/strata-dev/strata/internal/testutil"
)

// TestPrometheusOperatorConfig runs the lab's control half (the operator, the Prometheus Operator
// and Prometheus on the generated configuration) with a stand-in broker pod: every monitor
// becomes a job of the generated configuration, the rules load, and a target of each role
// (the broker's PodMonitor, the operator's ServiceMonitor with its TLS asset and token) is scraped
// up with the labels the operator's relabelling gives it.
func TestPrometheusOperatorConfig(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts a control plane, two operators and Prometheus")
	}
	ctx := context.Background()
	o := labOptions()
	o.ScrapeInterval = 5 * time.Second // the autoscaler's least interval
	l := startControl(t, o, KubeletMonitor())

	upstream, err := os.ReadFile(filepath.Join(testutil.Root(), "config", "prometheus", "upstream-monitors.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	monitors, err := monitoringObjects(upstream, MonitorNamespace, "PodMonitor", "ServiceMonitor")
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, m := range append(append(monitors, KubeletMonitor()), RenderChart(t, "strata", "strata-system").Objects...) {
		want = append(want, jobNames(m)...)
	}
	var cfg struct {
		RuleFiles     []string `json:"rule_files"`
		ScrapeConfigs []struct {
			JobName string `json:"job_name"`
		} `json:"scrape_configs"`
	}
	if err := yaml.Unmarshal(l.Generated.Config, &cfg); err != nil {
		t.Fatal(err)
	}
	var jobs []string
	for _, sc := range cfg.ScrapeConfigs {
		jobs = append(jobs, sc.JobName)
	}
	sort.Strings(want)
	sort.Strings(jobs)
	if !slices.Equal(jobs, want) {
		t.Errorf("generated jobs %v, want one per monitor endpoint %v", jobs, want)
	}
	if len(cfg.RuleFiles) == 0 {
		t.Error("the generated configuration loads no rule files")
	}

	// A broker pod as Strimzi labels it, serving one series.
	srv := &http.Server{Addr: testutil.FreePort(t), Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintln(w, "lab_stand_in 1")
	})}
	go func() { _ = srv.ListenAndServe() }()
	t.Cleanup(func() { _ = srv.Close() })
	l.AddPod(t, Pod{Namespace: PipelineNamespace, Name: "lab-broker-0", Container: "kafka", PortName: "tcp-prometheus",
		Address: srv.Addr, Labels: map[string]string{"strimzi.io/kind": "Kafka", "strimzi.io/cluster": "lab"}})

	for q, labels := range map[string]map[string]string{
		`up{pod="lab-broker-0"}`: {"job": "monitoring/strata-kafka", "namespace": PipelineNamespace, "container": "kafka",
			"endpoint": "tcp-prometheus", "strimzi_io_cluster": "lab"},
		`up{job="strata-metrics"}`: {"namespace": "strata-system", "service": "strata-metrics", "endpoint": "https"},
	} {
		r, ok := l.Prometheus.WaitFor(ctx, q+" == 1", 2*time.Minute, func(r Result) bool { return r.Err == nil && len(r.Series) == 1 })
		if !ok {
			t.Errorf("%s: %v, want one target up", q, r)
			continue
		}
		for k, v := range labels {
			if got := r.Series[0].Labels[k]; got != v {
				t.Errorf("%s: %s=%q, want %q (all: %v)", q, k, got, v, r.Series[0].Labels)
			}
		}
	}
	// The rules are Strata's, loaded from the operator's rulefiles ConfigMap.
	if rules := ruleNames(t, l.Prometheus); !slices.Contains(rules, "StrataOperatorDown") {
		t.Errorf("Prometheus loaded the rules %v, want Strata's alerts (StrataOperatorDown)", rules)
	}
}

// ruleNames are the names of the rules Prometheus loaded (/api/v1/rules).
func ruleNames(t *testing.T, p *Prometheus) []string {
	t.Helper()
	resp, err := http.Get(p.URL + "/api/v1/rules")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		Data struct {
			Groups []struct {
				Rules []struct {
					Name string `json:"name"`
				} `json:"rules"`
			} `json:"groups"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, g := range body.Data.Groups {
		for _, r := range g.Rules {
			out = append(out, r.Name)
		}
	}
	return out
}
