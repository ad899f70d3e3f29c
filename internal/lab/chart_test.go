package lab

import (
	"slices"
	"strings"
	"testing"
)

// The lab runs the operator with the chart's arguments, replacing only what a pod provides.
func TestOperatorArgsFollowTheChart(t *testing.T) {
	chart := RenderChart(t, "strata", "strata-system")
	if chart.ServiceAccount == "" || chart.MetricsReader == nil || len(chart.RBAC) < 4 {
		t.Fatalf("chart: ServiceAccount %q, metrics reader %v, %d RBAC objects", chart.ServiceAccount, chart.MetricsReader != nil, len(chart.RBAC))
	}
	args := operatorArgs(chart, "/k", "127.0.0.1:1", "127.0.0.1:2", "/certs")
	for _, want := range []string{"--kubeconfig=/k", "--leader-election-namespace=strata-system",
		"--metrics-bind-address=127.0.0.1:1", "--health-probe-bind-address=127.0.0.1:2", "--metrics-cert-dir=/certs",
		"--volume-cleanup-namespace=strata-system", "--leader-elect"} {
		if !slices.Contains(args, want) {
			t.Errorf("operator args %v lack %s", args, want)
		}
	}
	for _, a := range args {
		if strings.HasPrefix(a, "--metrics-bind-address=:") || strings.HasPrefix(a, "--metrics-cert-dir=/etc/") {
			t.Errorf("%s: a pod's value kept", a)
		}
	}
}
