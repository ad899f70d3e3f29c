package lab

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"
)

// Monitor is the part of a Prometheus Operator PodMonitor or ServiceMonitor
// (monitoring.coreos.com/v1) that decides which targets are scraped and with which labels. It is
// decoded strictly: a field Strata's monitors start to use that this translation does not know
// fails the lab instead of being ignored.
type Monitor struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name        string            `json:"name"`
		Namespace   string            `json:"namespace,omitempty"`
		Labels      map[string]string `json:"labels,omitempty"`
		Annotations map[string]string `json:"annotations,omitempty"`
	} `json:"metadata"`
	Spec struct {
		JobLabel          string            `json:"jobLabel,omitempty"`
		TargetLabels      []string          `json:"targetLabels,omitempty"`
		PodTargetLabels   []string          `json:"podTargetLabels,omitempty"`
		Selector          LabelSelector     `json:"selector"`
		NamespaceSelector NamespaceSelector `json:"namespaceSelector"`
		// PodMonitor's and ServiceMonitor's endpoints (only one of them is set).
		PodMetricsEndpoints []Endpoint `json:"podMetricsEndpoints,omitempty"`
		Endpoints           []Endpoint `json:"endpoints,omitempty"`
	} `json:"spec"`

	// Files maps a path inside the Prometheus pod (a mounted TLS asset, the ServiceAccount
	// token) to the lab's file holding the same content; a path the lab has no file for is
	// kept (and the scrape fails, as it would in a cluster without it).
	Files map[string]string `json:"-"`
}

// LabelSelector is a Kubernetes label selector.
type LabelSelector struct {
	MatchLabels      map[string]string `json:"matchLabels,omitempty"`
	MatchExpressions []struct {
		Key      string   `json:"key"`
		Operator string   `json:"operator"`
		Values   []string `json:"values,omitempty"`
	} `json:"matchExpressions,omitempty"`
}

// NamespaceSelector is the monitor's namespaceSelector.
type NamespaceSelector struct {
	Any        bool     `json:"any,omitempty"`
	MatchNames []string `json:"matchNames,omitempty"`
}

// Endpoint is a podMetricsEndpoints or endpoints item.
type Endpoint struct {
	Port              string     `json:"port,omitempty"`
	Path              string     `json:"path,omitempty"`
	Scheme            string     `json:"scheme,omitempty"`
	Interval          string     `json:"interval,omitempty"`
	ScrapeTimeout     string     `json:"scrapeTimeout,omitempty"`
	HonorLabels       bool       `json:"honorLabels,omitempty"`
	HonorTimestamps   *bool      `json:"honorTimestamps,omitempty"`
	FilterRunning     *bool      `json:"filterRunning,omitempty"`
	Relabelings       []Relabel  `json:"relabelings,omitempty"`
	MetricRelabelings []Relabel  `json:"metricRelabelings,omitempty"`
	BearerTokenFile   string     `json:"bearerTokenFile,omitempty"`
	TLSConfig         *TLSConfig `json:"tlsConfig,omitempty"`
}

// TLSConfig is the part of a monitor's SafeTLSConfig Strata's monitors use.
type TLSConfig struct {
	CA                 SecretOrConfigMap `json:"ca,omitempty"`
	ServerName         string            `json:"serverName,omitempty"`
	InsecureSkipVerify bool              `json:"insecureSkipVerify,omitempty"`
}

// SecretOrConfigMap names a key of a Secret or a ConfigMap in the monitor's namespace.
type SecretOrConfigMap struct {
	Secret    *KeySelector `json:"secret,omitempty"`
	ConfigMap *KeySelector `json:"configMap,omitempty"`
}

// KeySelector is a Secret's or ConfigMap's key.
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

// TLSAssetPath is where the Prometheus Operator v0.93.0 mounts a monitor's TLS asset in the
// Prometheus pod (pkg/prometheus/promcfg.go: path.Join(tlsAssetsDir, store.TLSAsset(...)), with
// tlsAssetsDir /etc/prometheus/certs and the asset named <secret|configmap>_<namespace>_<name>_<key>).
func TLSAssetPath(namespace string, ref SecretOrConfigMap) string {
	switch {
	case ref.Secret != nil:
		return fmt.Sprintf("/etc/prometheus/certs/secret_%s_%s_%s", namespace, ref.Secret.Name, ref.Secret.Key)
	case ref.ConfigMap != nil:
		return fmt.Sprintf("/etc/prometheus/certs/configmap_%s_%s_%s", namespace, ref.ConfigMap.Name, ref.ConfigMap.Key)
	}
	return ""
}

// file is the lab's file for a path in the Prometheus pod.
func (m Monitor) file(path string) string {
	if f, ok := m.Files[path]; ok {
		return f
	}
	return path
}

// Relabel is a monitor's RelabelConfig.
type Relabel struct {
	SourceLabels []string `json:"sourceLabels,omitempty"`
	Separator    *string  `json:"separator,omitempty"`
	TargetLabel  string   `json:"targetLabel,omitempty"`
	Regex        string   `json:"regex,omitempty"`
	Modulus      uint64   `json:"modulus,omitempty"`
	Replacement  *string  `json:"replacement,omitempty"`
	Action       string   `json:"action,omitempty"`
}

// ParseMonitors decodes the PodMonitors and ServiceMonitors of a multi-document YAML stream
// (other kinds are skipped); a monitor without a namespace gets defaultNamespace, as
// `kubectl apply -n` gives it.
func ParseMonitors(stream []byte, defaultNamespace string) ([]Monitor, error) {
	var out []Monitor
	for _, doc := range regexp.MustCompile(`(?m)^---\s*$`).Split(string(stream), -1) {
		var head struct {
			Kind string `json:"kind"`
		}
		if err := yaml.Unmarshal([]byte(doc), &head); err != nil {
			return nil, err
		}
		if head.Kind != "PodMonitor" && head.Kind != "ServiceMonitor" {
			continue
		}
		var m Monitor
		if err := yaml.UnmarshalStrict([]byte(doc), &m); err != nil {
			return nil, fmt.Errorf("%s: %w", head.Kind, err)
		}
		if m.Metadata.Namespace == "" {
			m.Metadata.Namespace = defaultNamespace
		}
		out = append(out, m)
	}
	return out, nil
}

// sanitize is the label-name form Kubernetes service discovery and the operator give a
// Kubernetes label (prometheus/util/strutil.SanitizeLabelName).
func sanitize(name string) string {
	return regexp.MustCompile(`[^a-zA-Z0-9_]`).ReplaceAllString(name, "_")
}

type rule = map[string]any

// ScrapeConfigs returns the monitor's scrape configurations, one per endpoint, as the Prometheus
// Operator v0.93.0 generates them (pkg/prometheus/promcfg.go: generatePodMonitorConfig and
// generateServiceMonitorConfig), with these differences:
//   - targets come from file_sd (file) instead of kubernetes_sd_configs: the lab's processes are
//     not pods; Targets writes them with the __meta_kubernetes_* labels the pod or endpoints role
//     would give them, and only for the namespaces the namespaceSelector names (the operator
//     passes those to the service discovery);
//   - interval, when not "", replaces every endpoint's interval (the lab runs in minutes), and
//     every scheme is http (the lab serves no TLS);
//   - no sharding relabelings (one shard keeps every target) and no scrape class.
func (m Monitor) ScrapeConfigs(file, interval string) ([]map[string]any, error) {
	pod := m.Kind == "PodMonitor"
	endpoints := m.Spec.Endpoints
	kind := "serviceMonitor"
	labelMeta := "__meta_kubernetes_service_label_"
	presentMeta := "__meta_kubernetes_service_labelpresent_"
	if pod {
		endpoints = m.Spec.PodMetricsEndpoints
		kind = "podMonitor"
		labelMeta = "__meta_kubernetes_pod_label_"
		presentMeta = "__meta_kubernetes_pod_labelpresent_"
	}
	var out []map[string]any
	for i, ep := range endpoints {
		if ep.Port == "" {
			return nil, fmt.Errorf("%s %s: endpoint %d has no port name: the lab only reproduces named ports", m.Kind, m.Metadata.Name, i)
		}
		cfg := map[string]any{
			"job_name":        fmt.Sprintf("%s/%s/%s/%d", kind, m.Metadata.Namespace, m.Metadata.Name, i),
			"honor_labels":    ep.HonorLabels,
			"file_sd_configs": []any{map[string]any{"files": []string{file}, "refresh_interval": "5s"}},
			"scheme":          "http",
		}
		if ep.Scheme != "" {
			cfg["scheme"] = ep.Scheme
		}
		if tc := ep.TLSConfig; tc != nil {
			tls := map[string]any{}
			if ca := TLSAssetPath(m.Metadata.Namespace, tc.CA); ca != "" {
				tls["ca_file"] = m.file(ca)
			}
			if tc.ServerName != "" {
				tls["server_name"] = tc.ServerName
			}
			if tc.InsecureSkipVerify {
				tls["insecure_skip_verify"] = true
			}
			cfg["tls_config"] = tls
		}
		if ep.BearerTokenFile != "" {
			cfg["bearer_token_file"] = m.file(ep.BearerTokenFile)
		}
		if ep.HonorTimestamps != nil {
			cfg["honor_timestamps"] = *ep.HonorTimestamps
		}
		if ep.Interval != "" {
			cfg["scrape_interval"] = ep.Interval
		}
		if interval != "" {
			cfg["scrape_interval"] = interval
			delete(cfg, "scrape_timeout")
		} else if ep.ScrapeTimeout != "" {
			cfg["scrape_timeout"] = ep.ScrapeTimeout
		}
		if ep.Path != "" {
			cfg["metrics_path"] = ep.Path
		}

		rs := []rule{{"source_labels": []string{"job"}, "target_label": "__tmp_prometheus_job_name"}}
		running := rule{"action": "drop", "source_labels": []string{"__meta_kubernetes_pod_phase"}, "regex": "(Failed|Succeeded)"}
		filterRunning := ep.FilterRunning == nil || *ep.FilterRunning
		if pod && filterRunning {
			rs = append(rs, running)
		}
		keys := make([]string, 0, len(m.Spec.Selector.MatchLabels))
		for k := range m.Spec.Selector.MatchLabels {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			rs = append(rs, rule{"action": "keep", "source_labels": []string{labelMeta + sanitize(k), presentMeta + sanitize(k)},
				"regex": fmt.Sprintf("(%s);true", m.Spec.Selector.MatchLabels[k])})
		}
		for _, e := range m.Spec.Selector.MatchExpressions {
			both := []string{labelMeta + sanitize(e.Key), presentMeta + sanitize(e.Key)}
			switch e.Operator {
			case "In":
				rs = append(rs, rule{"action": "keep", "source_labels": both, "regex": fmt.Sprintf("(%s);true", strings.Join(e.Values, "|"))})
			case "NotIn":
				rs = append(rs, rule{"action": "drop", "source_labels": both, "regex": fmt.Sprintf("(%s);true", strings.Join(e.Values, "|"))})
			case "Exists":
				rs = append(rs, rule{"action": "keep", "source_labels": []string{presentMeta + sanitize(e.Key)}, "regex": "true"})
			case "DoesNotExist":
				rs = append(rs, rule{"action": "drop", "source_labels": []string{presentMeta + sanitize(e.Key)}, "regex": "true"})
			default:
				return nil, fmt.Errorf("%s %s: selector operator %q", m.Kind, m.Metadata.Name, e.Operator)
			}
		}
		if pod {
			rs = append(rs,
				rule{"action": "keep", "source_labels": []string{"__meta_kubernetes_pod_container_port_name"}, "regex": ep.Port},
				rule{"source_labels": []string{"__meta_kubernetes_namespace"}, "target_label": "namespace"},
				rule{"source_labels": []string{"__meta_kubernetes_pod_container_name"}, "target_label": "container"},
				rule{"source_labels": []string{"__meta_kubernetes_pod_name"}, "target_label": "pod"})
		} else {
			kindName := []string{"__meta_kubernetes_endpoint_address_target_kind", "__meta_kubernetes_endpoint_address_target_name"}
			rs = append(rs,
				rule{"action": "keep", "source_labels": []string{"__meta_kubernetes_endpoint_port_name"}, "regex": ep.Port},
				rule{"source_labels": kindName, "separator": ";", "regex": "Node;(.*)", "replacement": "${1}", "target_label": "node"},
				rule{"source_labels": kindName, "separator": ";", "regex": "Pod;(.*)", "replacement": "${1}", "target_label": "pod"},
				rule{"source_labels": []string{"__meta_kubernetes_namespace"}, "target_label": "namespace"},
				rule{"source_labels": []string{"__meta_kubernetes_service_name"}, "target_label": "service"},
				rule{"source_labels": []string{"__meta_kubernetes_pod_name"}, "target_label": "pod"},
				rule{"source_labels": []string{"__meta_kubernetes_pod_container_name"}, "target_label": "container"})
			if filterRunning {
				rs = append(rs, running)
			}
			for _, l := range m.Spec.TargetLabels {
				rs = append(rs, rule{"source_labels": []string{"__meta_kubernetes_service_label_" + sanitize(l)},
					"target_label": sanitize(l), "regex": "(.+)", "replacement": "${1}"})
			}
		}
		for _, l := range m.Spec.PodTargetLabels {
			rs = append(rs, rule{"source_labels": []string{"__meta_kubernetes_pod_label_" + sanitize(l)},
				"target_label": sanitize(l), "regex": "(.+)", "replacement": "${1}"})
		}
		if pod {
			rs = append(rs, rule{"target_label": "job", "replacement": m.Metadata.Namespace + "/" + m.Metadata.Name})
		} else {
			rs = append(rs, rule{"source_labels": []string{"__meta_kubernetes_service_name"}, "target_label": "job", "replacement": "${1}"})
		}
		if m.Spec.JobLabel != "" {
			rs = append(rs, rule{"source_labels": []string{labelMeta + sanitize(m.Spec.JobLabel)}, "target_label": "job",
				"regex": "(.+)", "replacement": "${1}"})
		}
		rs = append(rs, rule{"target_label": "endpoint", "replacement": ep.Port})
		rs = append(rs, relabels(ep.Relabelings)...)
		cfg["relabel_configs"] = rs
		if len(ep.MetricRelabelings) > 0 {
			cfg["metric_relabel_configs"] = relabels(ep.MetricRelabelings)
		}
		out = append(out, cfg)
	}
	return out, nil
}

// relabels is promcfg.go's generateRelabelConfig: the monitor's camelCase fields in Prometheus'
// names, the action lowercased.
func relabels(rc []Relabel) []rule {
	var out []rule
	for _, c := range rc {
		r := rule{}
		if len(c.SourceLabels) > 0 {
			r["source_labels"] = c.SourceLabels
		}
		if c.Separator != nil {
			r["separator"] = *c.Separator
		}
		if c.TargetLabel != "" {
			r["target_label"] = c.TargetLabel
		}
		if c.Regex != "" {
			r["regex"] = c.Regex
		}
		if c.Modulus != 0 {
			r["modulus"] = c.Modulus
		}
		if c.Replacement != nil {
			r["replacement"] = *c.Replacement
		}
		if c.Action != "" {
			r["action"] = strings.ToLower(c.Action)
		}
		out = append(out, r)
	}
	return out
}

// Selects says whether the monitor's namespaceSelector covers namespace (the service
// discovery's namespaces: promcfg.go getNamespacesFromNamespaceSelector).
func (m Monitor) Selects(namespace string) bool {
	ns := m.Spec.NamespaceSelector
	switch {
	case ns.Any:
		return true
	case len(ns.MatchNames) == 0:
		return namespace == m.Metadata.Namespace
	default:
		for _, n := range ns.MatchNames {
			if n == namespace {
				return true
			}
		}
		return false
	}
}
