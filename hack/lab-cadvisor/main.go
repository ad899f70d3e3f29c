// Command lab-cadvisor serves cAdvisor's container metrics for the lab's processes as the kubelet
// serves them at /metrics/cadvisor: the same cAdvisor code (the version the pinned Kubernetes
// embeds), the same metric set and the kubelet's labels (namespace, pod, container, from the
// container's io.kubernetes.* labels).
//
// The kubelet learns its containers from the container runtime; the lab has no runtime, so a
// file lists them, re-read at every scrape: one JSON object per container with its cgroup (a
// path under each cgroup hierarchy), the pid of its process (network statistics come from that
// process's network namespace, /proc/<pid>/net/dev, as cAdvisor's containerd handler reads its
// task's) and the pod it stands for.
//
//	lab-cadvisor -listen 127.0.0.1:10255 -containers containers.json
//
// Kubernetes v1.36.3 pkg/kubelet/server/server.go (InstallDefaultHandlers: includedMetrics and
// NewPrometheusCollector; containerPrometheusLabelsFunc) is what this mirrors.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"net/http"
	"os"
	"runtime"
	"sync"
	"time"

	"github.com/google/cadvisor/container"
	"github.com/google/cadvisor/container/common"
	"github.com/google/cadvisor/container/libcontainer"
	info "github.com/google/cadvisor/info/v1"
	v2 "github.com/google/cadvisor/info/v2"
	"github.com/google/cadvisor/metrics"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"k8s.io/utils/clock"
)

// Container is one entry of the containers file.
type Container struct {
	Cgroup    string `json:"cgroup"` // e.g. /strata-lab/<pod>
	Pid       int    `json:"pid"`
	Namespace string `json:"namespace"`
	Pod       string `json:"pod"`
	Container string `json:"container"`
	Image     string `json:"image"`
}

// The kubelet's container labels (pkg/kubelet/types/labels.go).
const (
	podNameLabel       = "io.kubernetes.pod.name"
	podNamespaceLabel  = "io.kubernetes.pod.namespace"
	containerNameLabel = "io.kubernetes.container.name"
)

// includedMetrics is the kubelet's set (PressureMetrics only with the KubeletPSI gate on cgroup
// v2; the lab's machine may have cgroup v1).
var includedMetrics = container.MetricSet{
	container.CpuUsageMetrics:     struct{}{},
	container.MemoryUsageMetrics:  struct{}{},
	container.CpuLoadMetrics:      struct{}{},
	container.DiskIOMetrics:       struct{}{},
	container.DiskUsageMetrics:    struct{}{},
	container.NetworkUsageMetrics: struct{}{},
	container.AppMetrics:          struct{}{},
	container.ProcessMetrics:      struct{}{},
	container.OOMMetrics:          struct{}{},
}

// provider is the collector's info provider, the kubelet's prometheusHostAdapter in small.
type provider struct {
	file   string
	mounts map[string]string
	mu     sync.Mutex
	// handlers are kept per cgroup and pid: cAdvisor's handler caches per-process state.
	handlers map[string]*libcontainer.Handler
}

func (p *provider) GetVersionInfo() (*info.VersionInfo, error) {
	return &info.VersionInfo{KernelVersion: "lab", ContainerOsVersion: "lab", CadvisorVersion: "lab"}, nil
}

func (p *provider) GetMachineInfo() (*info.MachineInfo, error) {
	return &info.MachineInfo{NumCores: runtime.NumCPU(), Timestamp: time.Now()}, nil
}

func (p *provider) GetRequestedContainersInfo(string, v2.RequestOptions) (map[string]*info.ContainerInfo, error) {
	b, err := os.ReadFile(p.file)
	if err != nil {
		return nil, err
	}
	var cs []Container
	if err := json.Unmarshal(b, &cs); err != nil {
		return nil, fmt.Errorf("%s: %w", p.file, err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	out := map[string]*info.ContainerInfo{}
	for _, c := range cs {
		paths := common.MakeCgroupPaths(p.mounts, c.Cgroup)
		if !common.CgroupExists(paths) {
			continue // the container is gone
		}
		key := fmt.Sprintf("%s@%d", c.Cgroup, c.Pid)
		h, ok := p.handlers[key]
		if !ok {
			mgr, err := libcontainer.NewCgroupManager(c.Cgroup, paths)
			if err != nil {
				return nil, err
			}
			h = libcontainer.NewHandler(mgr, "/", c.Pid, includedMetrics)
			p.handlers[key] = h
		}
		stats, err := h.GetStats()
		if err != nil {
			log.Printf("%s: %v", c.Cgroup, err)
			continue
		}
		stats.Timestamp = time.Now()
		spec, err := common.GetSpec(paths, p, true, false)
		if err != nil {
			return nil, err
		}
		spec.Image = c.Image
		spec.Labels = map[string]string{podNameLabel: c.Pod, podNamespaceLabel: c.Namespace, containerNameLabel: c.Container}
		out[c.Cgroup] = &info.ContainerInfo{
			ContainerReference: info.ContainerReference{Name: c.Cgroup, Aliases: []string{c.Pod + "_" + c.Container}},
			Spec:               spec,
			Stats:              []*info.ContainerStats{stats},
		}
	}
	return out, nil
}

// containerLabels is the kubelet's containerPrometheusLabelsFunc.
func containerLabels(c *info.ContainerInfo) map[string]string {
	var name string
	if len(c.Aliases) > 0 {
		name = c.Aliases[0]
	}
	return map[string]string{
		metrics.LabelID:    c.Name,
		metrics.LabelName:  name,
		metrics.LabelImage: c.Spec.Image,
		"pod":              c.Spec.Labels[podNameLabel],
		"namespace":        c.Spec.Labels[podNamespaceLabel],
		"container":        c.Spec.Labels[containerNameLabel],
	}
}

func main() {
	listen := flag.String("listen", "127.0.0.1:10255", "address to serve /metrics/cadvisor on")
	file := flag.String("containers", "containers.json", "the containers to report (JSON list)")
	flag.Parse()
	mounts, err := libcontainer.GetCgroupSubsystems(includedMetrics)
	if err != nil {
		log.Fatalf("cgroup hierarchies: %v", err)
	}
	p := &provider{file: *file, mounts: mounts, handlers: map[string]*libcontainer.Handler{}}
	r := prometheus.NewRegistry()
	r.MustRegister(metrics.NewPrometheusCollector(p, containerLabels, includedMetrics, clock.RealClock{},
		v2.RequestOptions{IdType: v2.TypeName, Count: 1, Recursive: true}))
	http.Handle("/metrics/cadvisor", promhttp.HandlerFor(r, promhttp.HandlerOpts{}))
	http.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })
	log.Printf("serving /metrics/cadvisor on %s for the containers in %s", *listen, *file)
	log.Fatal(http.ListenAndServe(*listen, nil))
}
