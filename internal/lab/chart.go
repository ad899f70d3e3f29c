package lab

import (
	"bytes"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/strata-dev/strata/internal/testutil"
)

// Chart is what the lab takes from the Helm chart (charts/strata) rendered with its
// ServiceMonitor and PrometheusRule enabled: the ServiceMonitor, and the metrics Service and the
// operator pod it selects, so that the operator's series get the labels they get in a cluster.
type Chart struct {
	Monitor Monitor
	// Objects are the ServiceMonitor and the PrometheusRule as rendered, for the Prometheus
	// Operator.
	Objects []*unstructured.Unstructured
	// Pod is the operator's pod (its Address left to fill): the Deployment's pod labels, the
	// container serving the Service's target port, the Service.
	Pod Pod
	// MetricsReader is the chart's ClusterRole that lets a scraper get /metrics.
	MetricsReader *rbacv1.ClusterRole
	// RBAC is the chart's ServiceAccount, Roles, ClusterRoles and their bindings: the lab runs
	// the operator as that ServiceAccount, so it has exactly the permissions the chart grants.
	RBAC []*unstructured.Unstructured
	// ServiceAccount is the operator's ServiceAccount (in Pod.Namespace).
	ServiceAccount string
	// Args are the operator container's arguments.
	Args []string
}

// RenderChart renders charts/strata as release name in namespace (helm template, the pinned Helm:
// $HELM or hack/tools.sh's build).
func RenderChart(t testing.TB, release, namespace string) Chart {
	t.Helper()
	return RenderChartAt(t, filepath.Join(testutil.Root(), "charts", "strata"), release, namespace)
}

// RenderChartAt renders the chart in dir (another release's charts/strata, say) as RenderChart
// does, with the values of set (name=value) besides.
func RenderChartAt(t testing.TB, dir, release, namespace string, set ...string) Chart {
	t.Helper()
	helm := testutil.Tool(t, "helm", "HELM")
	var stdout, stderr bytes.Buffer
	args := []string{"template", release, dir,
		"--namespace", namespace, "--set", "serviceMonitor.enabled=true", "--set", "prometheusRule.enabled=true"}
	for _, v := range set {
		args = append(args, "--set", v)
	}
	cmd := exec.Command(helm, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("helm template: %v\n%s", err, stderr.String())
	}
	c, err := parseChart(stdout.Bytes(), namespace)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

type object struct {
	Kind     string `json:"kind"`
	Metadata struct {
		Name   string            `json:"name"`
		Labels map[string]string `json:"labels"`
	} `json:"metadata"`
	Spec struct {
		Selector map[string]any `json:"selector"`
		Ports    []struct {
			Name       string `json:"name"`
			TargetPort any    `json:"targetPort"`
		} `json:"ports"`
		Template struct {
			Metadata struct {
				Labels map[string]string `json:"labels"`
			} `json:"metadata"`
			Spec struct {
				Containers []struct {
					Name  string   `json:"name"`
					Args  []string `json:"args"`
					Ports []struct {
						Name string `json:"name"`
					} `json:"ports"`
				} `json:"containers"`
			} `json:"spec"`
		} `json:"template"`
	} `json:"spec"`
}

func parseChart(manifest []byte, namespace string) (Chart, error) {
	var c Chart
	monitors, err := ParseMonitors(manifest, namespace)
	if err != nil {
		return c, err
	}
	if len(monitors) != 1 || len(monitors[0].Spec.Endpoints) != 1 {
		return c, fmt.Errorf("the chart renders %d monitors, want one ServiceMonitor with one endpoint", len(monitors))
	}
	c.Monitor = monitors[0]
	if c.Objects, err = monitoringObjects(manifest, namespace, "ServiceMonitor", "PrometheusRule"); err != nil {
		return c, err
	}
	var objs []object
	for _, doc := range regexp.MustCompile(`(?m)^---\s*$`).Split(string(manifest), -1) {
		var o object
		if err := yaml.Unmarshal([]byte(doc), &o); err != nil {
			return c, err
		}
		objs = append(objs, o)
	}
	for _, doc := range regexp.MustCompile(`(?m)^---\s*$`).Split(string(manifest), -1) {
		var role rbacv1.ClusterRole
		if err := yaml.Unmarshal([]byte(doc), &role); err != nil {
			return c, err
		}
		if role.Kind == "ClusterRole" && strings.HasSuffix(role.Name, "-metrics-reader") {
			c.MetricsReader = &role
		}
		switch role.Kind {
		case "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding":
			u := &unstructured.Unstructured{}
			if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
				return c, err
			}
			if role.Kind == "ServiceAccount" {
				c.ServiceAccount = u.GetName()
			}
			c.RBAC = append(c.RBAC, u)
		}
	}
	if c.ServiceAccount == "" {
		return c, fmt.Errorf("the chart renders no ServiceAccount")
	}
	if c.MetricsReader == nil {
		return c, fmt.Errorf("the chart renders no metrics-reader ClusterRole")
	}
	port := c.Monitor.Spec.Endpoints[0].Port
	for _, svc := range objs {
		if svc.Kind != "Service" || !matches(c.Monitor.Spec.Selector.MatchLabels, svc.Metadata.Labels) {
			continue
		}
		for _, sp := range svc.Spec.Ports {
			if sp.Name != port {
				continue
			}
			for _, d := range objs {
				if d.Kind != "Deployment" || !selects(svc.Spec.Selector, d.Spec.Template.Metadata.Labels) {
					continue
				}
				for _, ctr := range d.Spec.Template.Spec.Containers {
					for _, cp := range ctr.Ports {
						if cp.Name == fmt.Sprint(sp.TargetPort) {
							c.Pod = Pod{Namespace: namespace, Name: d.Metadata.Name + "-5d4c7b9f8-lab00", Labels: d.Spec.Template.Metadata.Labels,
								Container: ctr.Name, PortName: cp.Name,
								Service: &Service{Name: svc.Metadata.Name, Labels: svc.Metadata.Labels, PortName: sp.Name}}
							c.Args = ctr.Args
							return c, nil
						}
					}
				}
			}
		}
	}
	return c, fmt.Errorf("no Service with port %q selected by the ServiceMonitor selects a Deployment's container port", port)
}

func matches(want, have map[string]string) bool {
	for k, v := range want {
		if have[k] != v {
			return false
		}
	}
	return true
}

func selects(selector map[string]any, labels map[string]string) bool {
	for k, v := range selector {
		if labels[k] != fmt.Sprint(v) {
			return false
		}
	}
	return len(selector) > 0
}
