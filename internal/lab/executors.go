package lab

import (
	"bytes"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/strata-dev/strata/internal/desired"
)

// Executor is one executor JVM of the job, as the executor pod it stands for.
type Executor struct {
	Pid int
	// ID is Spark's executor ID (the executor_id label of its metrics), App the Spark
	// application ID it belongs to (a new one at each submission).
	ID, App string
	// Pod is the name Spark gives the executor's pod: <app>-<16 hex digits>-exec-<id>
	// (internal/alerts/promql.go), the hex digits new at each submission.
	Pod string
}

// ExecutorPodName is the pod name of executor id of the Spark application appID of a
// SparkApplication named app. Spark names executor pods after a prefix of the application's name
// and a unique suffix per submission; the suffix here is a hash of the application ID.
func ExecutorPodName(app, appID, id string) string {
	h := fnv.New64a()
	_, _ = h.Write([]byte(appID))
	return fmt.Sprintf("%s-%016x-exec-%s", app, h.Sum64(), id)
}

// executorBackend is the main class of an executor JVM (the command Spark's standalone worker
// and the Kubernetes executor pods' entrypoint both run).
const executorBackend = "org.apache.spark.executor.CoarseGrainedExecutorBackend"

// parseExecutor reads an executor's ID and application ID from its command line (NUL-separated
// as /proc/<pid>/cmdline), or says it is not an executor.
func parseExecutor(cmdline []byte) (id, app string, ok bool) {
	args := strings.Split(string(bytes.TrimRight(cmdline, "\x00")), "\x00")
	isExecutor := false
	for i, a := range args {
		switch {
		case a == executorBackend:
			isExecutor = true
		case a == "--executor-id" && i+1 < len(args):
			id = args[i+1]
		case a == "--app-id" && i+1 < len(args):
			app = args[i+1]
		}
	}
	return id, app, isExecutor && id != "" && app != ""
}

// children are the processes whose parent is pid (from /proc/<pid>/stat: the field after the
// parenthesised command name).
func children(pid int) []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		i := bytes.LastIndexByte(stat, ')')
		if i < 0 {
			continue
		}
		fields := strings.Fields(string(stat[i+1:]))
		if len(fields) > 1 && fields[1] == strconv.Itoa(pid) {
			out = append(out, child)
		}
	}
	return out
}

// executorWatch finds the executor JVMs the driver's standalone worker starts and reports each as
// its executor pod: a cgroup of its own that cAdvisor serves as the pod's executor container, as
// the kubelet serves the executor pods of a cluster.
type executorWatch struct {
	namespace, app string
	cadvisor       *CAdvisor // nil: executors are only tracked

	mu    sync.Mutex
	known map[int]Executor
	err   error
}

// poll records the executors of the driver with pid driver that it does not know yet, and
// forgets those that exited (their cgroups removed, as the kubelet removes a deleted pod's).
func (w *executorWatch) poll(driver int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for pid, e := range w.known {
		if _, err := os.Stat(filepath.Join("/proc", strconv.Itoa(pid))); err != nil {
			delete(w.known, pid)
			if w.cadvisor != nil {
				w.cadvisor.remove(e.Pod)
			}
		}
	}
	for _, pid := range children(driver) {
		if _, ok := w.known[pid]; ok {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
		if err != nil {
			continue
		}
		id, app, ok := parseExecutor(cmdline)
		if !ok {
			continue
		}
		e := Executor{Pid: pid, ID: id, App: app, Pod: ExecutorPodName(w.app, app, id)}
		if w.cadvisor != nil {
			if err := w.cadvisor.add(pid, w.namespace, e.Pod, desired.SparkExecutorContainer); err != nil && w.err == nil {
				w.err = err
			}
		}
		w.known[pid] = e
	}
}

// executors are the running executors, by pid.
func (w *executorWatch) executors() []Executor {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]Executor, 0, len(w.known))
	for _, e := range w.known {
		out = append(out, e)
	}
	return out
}

// failed is the first error putting an executor into its cgroup.
func (w *executorWatch) failed() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// watch polls every second for the executors of the job's current driver until stop closes.
func (w *executorWatch) watch(driver func() int, stop <-chan struct{}) {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		w.poll(driver())
		select {
		case <-stop:
			return
		case <-tick.C:
		}
	}
}
