package lab

import (
	"fmt"
	"regexp"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// monitoringGroup is the Prometheus Operator's API group: PodMonitor, ServiceMonitor,
// PrometheusRule, Prometheus.
const monitoringGroup = "monitoring.coreos.com"

// Monitor is what the lab reads of a Prometheus Operator PodMonitor or ServiceMonitor
// (monitoring.coreos.com/v1) to stand its processes in for the pods and Services the monitor
// selects, and to give the chart's metrics endpoint the certificate its tlsConfig verifies. The
// Prometheus Operator itself turns the monitors into scrape configurations (GeneratePrometheusConfig);
// the lab applies them to its control plane with strict field validation, so a field the
// vendored CRDs do not know fails there.
type Monitor struct {
	Kind     string `json:"kind"`
	Metadata struct {
		Name      string `json:"name"`
		Namespace string `json:"namespace,omitempty"`
	} `json:"metadata"`
	Spec struct {
		Selector          LabelSelector     `json:"selector"`
		NamespaceSelector NamespaceSelector `json:"namespaceSelector"`
		// PodMonitor's and ServiceMonitor's endpoints (only one of them is set).
		PodMetricsEndpoints []Endpoint `json:"podMetricsEndpoints,omitempty"`
		Endpoints           []Endpoint `json:"endpoints,omitempty"`
	} `json:"spec"`
}

// LabelSelector is a Kubernetes label selector's matchLabels.
type LabelSelector struct {
	MatchLabels map[string]string `json:"matchLabels,omitempty"`
}

// NamespaceSelector is the monitor's namespaceSelector.
type NamespaceSelector struct {
	Any        bool     `json:"any,omitempty"`
	MatchNames []string `json:"matchNames,omitempty"`
}

// Endpoint is a podMetricsEndpoints or endpoints item: its port, and the TLS configuration the
// lab's metrics certificate must satisfy.
type Endpoint struct {
	Port      string     `json:"port,omitempty"`
	TLSConfig *TLSConfig `json:"tlsConfig,omitempty"`
}

// TLSConfig is the part of a monitor's SafeTLSConfig the lab reads: the CA's Secret and the name
// verified.
type TLSConfig struct {
	CA struct {
		Secret *KeySelector `json:"secret,omitempty"`
	} `json:"ca,omitempty"`
	ServerName string `json:"serverName,omitempty"`
}

// KeySelector is a Secret's key.
type KeySelector struct {
	Name string `json:"name"`
	Key  string `json:"key"`
}

// ServerName is the endpoint's tlsConfig.serverName ("" without one).
func (ep Endpoint) ServerName() string {
	if ep.TLSConfig == nil {
		return ""
	}
	return ep.TLSConfig.ServerName
}

// Selects says whether the monitor's namespaceSelector covers namespace (the namespaces the
// operator gives its service discovery: pkg/prometheus/promcfg.go getNamespacesFromNamespaceSelector).
func (m Monitor) Selects(namespace string) bool {
	ns := m.Spec.NamespaceSelector
	switch {
	case ns.Any:
		return true
	case len(ns.MatchNames) == 0:
		return namespace == m.Metadata.Namespace
	default:
		return slices.Contains(ns.MatchNames, namespace)
	}
}

// ParseMonitors decodes the PodMonitors and ServiceMonitors of a multi-document YAML stream
// (other kinds are skipped); a monitor without a namespace gets defaultNamespace, as
// `kubectl apply -n` gives it.
func ParseMonitors(stream []byte, defaultNamespace string) ([]Monitor, error) {
	objs, err := monitoringObjects(stream, defaultNamespace, "PodMonitor", "ServiceMonitor")
	if err != nil {
		return nil, err
	}
	out := make([]Monitor, 0, len(objs))
	for _, o := range objs {
		b, err := yaml.Marshal(o.Object)
		if err != nil {
			return nil, err
		}
		var m Monitor
		if err := yaml.Unmarshal(b, &m); err != nil {
			return nil, fmt.Errorf("%s %s: %w", o.GetKind(), o.GetName(), err)
		}
		out = append(out, m)
	}
	return out, nil
}

// monitoringObjects are the monitoring.coreos.com objects of kinds in a multi-document YAML stream
// (a rendered chart, config/prometheus/upstream-monitors.yaml), as the lab applies them; one
// without a namespace gets defaultNamespace.
func monitoringObjects(stream []byte, defaultNamespace string, kinds ...string) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	for _, doc := range regexp.MustCompile(`(?m)^---\s*$`).Split(string(stream), -1) {
		o := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(doc), &o.Object); err != nil {
			return nil, err
		}
		if o.Object == nil || o.GroupVersionKind().Group != monitoringGroup || !slices.Contains(kinds, o.GetKind()) {
			continue
		}
		if o.GetNamespace() == "" {
			o.SetNamespace(defaultNamespace)
		}
		out = append(out, o)
	}
	return out, nil
}

// jobNames are the scrape jobs the operator generates for a monitor: one per endpoint, named
// <serviceMonitor|podMonitor>/<namespace>/<name>/<index> (pkg/prometheus/promcfg.go
// generatePodMonitorConfig and generateServiceMonitorConfig).
func jobNames(o *unstructured.Unstructured) []string {
	var kind, field string
	switch o.GetKind() {
	case "PodMonitor":
		kind, field = "podMonitor", "podMetricsEndpoints"
	case "ServiceMonitor":
		kind, field = "serviceMonitor", "endpoints"
	default:
		return nil
	}
	eps, _, _ := unstructured.NestedSlice(o.Object, "spec", field)
	out := make([]string, 0, len(eps))
	for i := range eps {
		out = append(out, fmt.Sprintf("%s/%s/%s/%d", kind, o.GetNamespace(), o.GetName(), i))
	}
	return out
}
