// Command gen-observability writes Strata's alert rules and Grafana dashboards from their one
// source in Go (internal/alerts, internal/dashboards). `make observability` runs it from the
// repository's root; `make manifests` runs that, so `make verify` fails on stale files.
//
//	config/prometheus/rules.yaml            Prometheus rule groups (promtool check/test rules)
//	config/prometheus/prometheusrule.yaml   the same as a Prometheus Operator PrometheusRule
//	config/grafana/alerting/strata-alerts.yaml  the same as Grafana-managed alert rules (provisioning)
//	config/grafana/dashboards/*.json        the dashboards
//	config/grafana/dashboard-configmaps.yaml  the same as ConfigMaps for Grafana's sidecar
//	charts/strata/files/prometheus-rules.yaml, charts/strata/files/dashboards/*.json
//	                                        the chart's copies, which its templates render (when
//	                                        the chart, charts/strata/Chart.yaml, is there)
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/strata-dev/strata/internal/alerts"
	"github.com/strata-dev/strata/internal/dashboards"
)

func main() {
	root := flag.String("root", ".", "the repository's root")
	flag.Parse()
	if err := run(*root); err != nil {
		fmt.Fprintln(os.Stderr, "gen-observability:", err)
		os.Exit(1)
	}
}

func run(root string) error {
	files := map[string][]byte{}
	var err error
	if files["config/prometheus/rules.yaml"], err = alerts.RuleGroups(alerts.Defaults); err != nil {
		return err
	}
	if files["config/prometheus/prometheusrule.yaml"], err = alerts.PrometheusRule("strata", alerts.DefaultNamespace, nil, alerts.Defaults); err != nil {
		return err
	}
	if files["config/grafana/alerting/strata-alerts.yaml"], err = alerts.GrafanaRules(alerts.DefaultGrafana, alerts.Defaults); err != nil {
		return err
	}
	if files["config/grafana/dashboard-configmaps.yaml"], err = dashboards.ConfigMaps(); err != nil {
		return err
	}
	_, err = os.Stat(filepath.Join(root, "charts", "strata", "Chart.yaml"))
	chart := err == nil
	dirs := []string{"config/grafana/dashboards"}
	if chart {
		if files["charts/strata/files/prometheus-rules.yaml"], err = alerts.ChartRuleGroups(); err != nil {
			return err
		}
		dirs = append(dirs, "charts/strata/files/dashboards")
	}
	boards, err := dashboards.All()
	if err != nil {
		return err
	}
	for name, b := range boards {
		for _, dir := range dirs {
			files[dir+"/"+name+".json"] = b
		}
	}
	// Dashboards the generator no longer makes go.
	for _, dir := range dirs {
		old, _ := filepath.Glob(filepath.Join(root, dir, "*.json"))
		for _, f := range old {
			if _, ok := boards[strings.TrimSuffix(filepath.Base(f), ".json")]; !ok {
				if err := os.Remove(f); err != nil {
					return err
				}
			}
		}
	}
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		path := filepath.Join(root, n)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, files[n], 0o644); err != nil {
			return err
		}
	}
	return nil
}
