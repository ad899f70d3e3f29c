package lab

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/strata-dev/strata/internal/testutil"
)

// CAdvisor is cAdvisor's code serving the lab's processes as the kubelet serves its pods'
// containers at /metrics/cadvisor (hack/lab-cadvisor: the cAdvisor version Kubernetes v1.36.3
// embeds, the kubelet's metric set and labels). Each process it reports runs in a cgroup of its
// own under /strata-lab in every cgroup hierarchy; network statistics come from the process's
// network namespace, so they are real only for processes in a netlab host (in the test's own
// namespace a process shares the machine's interfaces, and loopback, which cAdvisor skips).
type CAdvisor struct {
	Pod  Pod
	file string
	// device is the disk holding the lab's files, whose I/O the lab's cgroups count (disk.go);
	// "" when they are on none.
	device string
	mu     sync.Mutex
	list   []cadvisorContainer
}

// cadvisorContainer is an entry of hack/lab-cadvisor's containers file.
type cadvisorContainer struct {
	Cgroup    string `json:"cgroup"`
	Pid       int    `json:"pid"`
	Namespace string `json:"namespace"`
	Pod       string `json:"pod"`
	Container string `json:"container"`
}

// cgroupRoot is where the cgroup hierarchies are mounted; hierarchies are the ones the kubelet's
// cAdvisor reads for its metric set (cgroup v1 names; on cgroup v2 the one unified hierarchy).
const cgroupRoot = "/sys/fs/cgroup"

var hierarchies = []string{"cpu", "cpuacct", "memory", "blkio", "pids"}

// KubeletNamespace and KubeletService are where kube-prometheus-stack's kubelet Service lives:
// the Prometheus Operator's kubelet controller keeps its endpoints (one per node).
const (
	KubeletNamespace = "kube-system"
	KubeletService   = "kube-prometheus-stack-kubelet"
)

// StartCAdvisor runs hack/lab-cadvisor. Without root, or without cgroup hierarchies it can write,
// it skips the test saying what was not checked.
func StartCAdvisor(t testing.TB, dir string) *CAdvisor {
	t.Helper()
	if why := cgroupsUnavailable(); why != "" {
		t.Skip(why)
	}
	c := &CAdvisor{file: filepath.Join(dir, "cadvisor-containers.json")}
	if err := c.write(); err != nil {
		t.Fatal(err)
	}
	if dev, err := wholeDisk(dir); err != nil {
		t.Logf("cAdvisor: the containers' disk I/O is not counted: %v", err)
	} else {
		c.device = dev
	}
	// Registered before the processes the lab puts into cgroups are started, this runs after
	// their cleanups killed them: a cgroup that still holds a process cannot be removed.
	t.Cleanup(c.removeAll)
	addr := testutil.FreePort(t)
	bin := testutil.Tool(t, "lab-cadvisor", "STRATA_LAB_CADVISOR")
	proc := start(t, dir, "cadvisor", exec.Command(bin, "-listen", addr, "-containers", c.file))
	if err := waitHTTP(http.DefaultClient, proc, "http://"+addr+"/healthz", time.Minute); err != nil {
		t.Fatal(err)
	}
	c.Pod = Pod{Namespace: KubeletNamespace, Name: "lab-node", Container: "kubelet", PortName: "http-metrics", Address: addr,
		Service: &Service{Name: KubeletService, PortName: "http-metrics",
			Labels: map[string]string{"app.kubernetes.io/name": "kubelet", "k8s-app": "kubelet"}}}
	return c
}

// cgroupsUnavailable says why the lab cannot put processes into cgroups of their own, or "".
func cgroupsUnavailable() string {
	if os.Geteuid() != 0 {
		return "cAdvisor: not root: the lab cannot put processes into cgroups of their own, so the container metrics (network, page cache, disk) are not checked; run as root to check them"
	}
	for _, h := range hierarchies {
		d := filepath.Join(cgroupRoot, h, "strata-lab", "probe")
		if err := os.MkdirAll(d, 0o755); err != nil {
			return fmt.Sprintf("cAdvisor: cannot create cgroup %s (%v): container metrics not checked", d, err)
		}
		_ = os.Remove(d)
		_ = os.Remove(filepath.Dir(d)) // strata-lab, unless a running lab uses it
	}
	return ""
}

// Add puts the process pid into a cgroup of its own and reports it as container of pod.
func (c *CAdvisor) Add(t testing.TB, pid int, namespace, pod, container string) {
	t.Helper()
	if err := c.add(pid, namespace, pod, container); err != nil {
		t.Fatal(err)
	}
}

// add is Add for callers outside the test's goroutine.
func (c *CAdvisor) add(pid int, namespace, pod, container string) error {
	cgroup := podCgroup(pod)
	for _, h := range hierarchies {
		d := filepath.Join(cgroupRoot, h, cgroup)
		if err := os.MkdirAll(d, 0o755); err != nil {
			return fmt.Errorf("cAdvisor: creating cgroup %s: %w", d, err)
		}
		if h == "blkio" && c.device != "" {
			if err := countIO(d, c.device); err != nil {
				return err
			}
		}
	}
	if err := c.join(pid, pod); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.list = append(c.list, cadvisorContainer{Cgroup: cgroup, Pid: pid, Namespace: namespace, Pod: pod, Container: container})
	return c.write()
}

// podCgroup is the cgroup the lab makes for pod, in every hierarchy.
func podCgroup(pod string) string { return "/strata-lab/" + pod }

// join moves process pid into pod's cgroups, made by add: it becomes one more process of the
// pod's container, as one `kubectl exec` starts.
func (c *CAdvisor) join(pid int, pod string) error {
	for _, h := range hierarchies {
		d := filepath.Join(cgroupRoot, h, podCgroup(pod))
		if err := os.WriteFile(filepath.Join(d, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0o644); err != nil {
			return fmt.Errorf("moving pid %d into %s: %w", pid, d, err)
		}
	}
	return nil
}

// remove stops reporting pod, whose processes exited, and removes its cgroup.
func (c *CAdvisor) remove(pod string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, e := range c.list {
		if e.Pod == pod {
			c.list = append(c.list[:i], c.list[i+1:]...)
			_ = c.write()
			removeCgroup(e.Cgroup)
			return
		}
	}
}

// removeAll removes every cgroup the lab made, once the test's processes are killed.
func (c *CAdvisor) removeAll() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, e := range c.list {
		removeCgroup(e.Cgroup)
	}
	c.list = nil
}

func (c *CAdvisor) write() error {
	b, err := json.Marshal(append([]cadvisorContainer{}, c.list...))
	if err != nil {
		return err
	}
	tmp := c.file + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, c.file)
}

// removeCgroup moves what is left in cgroup to the root and removes it (a cgroup with processes
// cannot be removed; the test's processes are killed by then, their cgroup left to empty).
func removeCgroup(cgroup string) {
	for _, h := range hierarchies {
		d := filepath.Join(cgroupRoot, h, cgroup)
		for range 20 {
			if err := os.Remove(d); err == nil || errors.Is(err, os.ErrNotExist) {
				break
			}
			time.Sleep(100 * time.Millisecond) // a killed process leaves its cgroup when it is reaped
		}
		_ = os.Remove(filepath.Dir(d)) // /strata-lab, once empty
	}
}

// KubeletMonitor is kube-prometheus-stack's kubelet ServiceMonitor, its cAdvisor endpoint
// (charts/kube-prometheus-stack templates/exporters/kubelet/servicemonitor.yaml): path
// /metrics/cadvisor, honorLabels (the series' own namespace, pod and container are the
// containers', not the kubelet's), honorTimestamps, and the metrics_path label. The lab's
// endpoint is plain HTTP, where the kubelet's is HTTPS with the ServiceAccount's token.
func KubeletMonitor() *unstructured.Unstructured {
	objs, err := monitoringObjects([]byte(fmt.Sprintf(kubeletMonitor, KubeletService, MonitorNamespace, KubeletNamespace)), MonitorNamespace, "ServiceMonitor")
	if err != nil || len(objs) != 1 {
		panic(fmt.Sprintf("the kubelet ServiceMonitor: %v", err))
	}
	return objs[0]
}

const kubeletMonitor = `
apiVersion: monitoring.coreos.com/v1
kind: ServiceMonitor
metadata:
  name: %s
  namespace: %s
spec:
  jobLabel: k8s-app
  selector:
    matchLabels:
      app.kubernetes.io/name: kubelet
      k8s-app: kubelet
  namespaceSelector:
    matchNames: [%s]
  endpoints:
    - port: http-metrics
      path: /metrics/cadvisor
      honorLabels: true
      honorTimestamps: true
      relabelings:
        - sourceLabels: [__metrics_path__]
          targetLabel: metrics_path
`
