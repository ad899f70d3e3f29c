package lab

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"sort"
)

// Pod is a lab process as Kubernetes would show it to Prometheus' service discovery: its pod's
// namespace, name, labels, the container and its one named metrics port, and the Service (if
// any) whose endpoints include that port.
type Pod struct {
	Namespace string
	Name      string
	Labels    map[string]string
	Container string
	PortName  string
	Address   string // host:port the process serves its metrics on
	Service   *Service
}

// Service is a Service selecting a pod, with the name of its port that targets the pod's.
type Service struct {
	Name     string
	Labels   map[string]string
	PortName string
}

type targetGroup struct {
	Targets []string          `json:"targets"`
	Labels  map[string]string `json:"labels"`
}

// targetGroups are the targets the kubernetes_sd_configs entry d replaces would find among pods:
// the pod role (a PodMonitor's) has one per container port, the endpoints role (a
// ServiceMonitor's) one per endpoint address and port of a Service, with the pod's metadata when
// the address is a pod's. Only the pods of d's namespaces are found, as the operator restricts the
// discovery to the monitor's namespaceSelector. Label names follow Prometheus' Kubernetes SD
// (discovery/kubernetes/pod.go and endpoints.go).
func targetGroups(d Discovery, pods []Pod) []targetGroup {
	out := []targetGroup{}
	endpoints := d.Role == "endpoints"
	for _, p := range pods {
		if !d.Covers(p.Namespace) {
			continue
		}
		if endpoints && p.Service == nil {
			continue
		}
		l := map[string]string{
			"__meta_kubernetes_namespace":                   p.Namespace,
			"__meta_kubernetes_pod_name":                    p.Name,
			"__meta_kubernetes_pod_phase":                   "Running",
			"__meta_kubernetes_pod_ready":                   "true",
			"__meta_kubernetes_pod_container_name":          p.Container,
			"__meta_kubernetes_pod_container_port_name":     p.PortName,
			"__meta_kubernetes_pod_container_port_number":   portOf(p.Address),
			"__meta_kubernetes_pod_container_port_protocol": "TCP",
		}
		for k, v := range p.Labels {
			l["__meta_kubernetes_pod_label_"+sanitize(k)] = v
			l["__meta_kubernetes_pod_labelpresent_"+sanitize(k)] = "true"
		}
		if endpoints {
			s := p.Service
			l["__meta_kubernetes_service_name"] = s.Name
			l["__meta_kubernetes_endpoint_port_name"] = s.PortName
			l["__meta_kubernetes_endpoint_port_protocol"] = "TCP"
			l["__meta_kubernetes_endpoint_ready"] = "true"
			l["__meta_kubernetes_endpoint_address_target_kind"] = "Pod"
			l["__meta_kubernetes_endpoint_address_target_name"] = p.Name
			for k, v := range s.Labels {
				l["__meta_kubernetes_service_label_"+sanitize(k)] = v
				l["__meta_kubernetes_service_labelpresent_"+sanitize(k)] = "true"
			}
		}
		out = append(out, targetGroup{Targets: []string{p.Address}, Labels: l})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Targets[0] < out[j].Targets[0] })
	return out
}

func portOf(address string) string {
	for i := len(address) - 1; i >= 0; i-- {
		if address[i] == ':' {
			return address[i+1:]
		}
	}
	return ""
}

// sanitize is the label-name form Kubernetes service discovery gives a Kubernetes label
// (prometheus/util/strutil.SanitizeLabelName).
func sanitize(name string) string {
	return regexp.MustCompile(`[^a-zA-Z0-9_]`).ReplaceAllString(name, "_")
}

// writeTargets writes d's file_sd file (atomically: Prometheus watches the file).
func writeTargets(d Discovery, pods []Pod) error {
	file := d.File
	b, err := json.MarshalIndent(targetGroups(d, pods), "", "  ")
	if err != nil {
		return err
	}
	tmp := file + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	if err := os.Rename(tmp, file); err != nil {
		return fmt.Errorf("file_sd %s: %w", file, err)
	}
	return nil
}
