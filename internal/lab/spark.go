package lab

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/internal/desired"
	"github.com/strata-dev/strata/internal/testutil/proc"
)

// IngestJob is the pipeline's own Spark job (jvm/ingest-job, the job of the SparkApplication the
// operator builds) run by spark-submit in Spark's local-cluster mode: the driver runs Spark's
// standalone master and one worker per executor in its JVM, and each worker starts its executor
// as a JVM of its own, with the executor cores and memory of the SparkApplication. The executors'
// tasks read the lab's topic and write to the lab's search node, committing the pipeline's
// consumer group as the job does in a cluster. The driver serves Spark's metrics (the executors'
// included) on its UI port as the driver pod does, scraped through the strata-spark-drivers
// PodMonitor; as root, each executor runs in a cgroup of its own that cAdvisor serves as its
// executor pod's container.
//
// When the job's driver exits (its query failed), its executors go with it and the lab submits
// the job again after the restart policy's interval, from the same checkpoint, as the Spark
// operator does with the SparkApplication's restartPolicy (desired.RestartType,
// RestartRetryInterval).
type IngestJob struct {
	Pod Pod
	// UI is the driver's UI (http://127.0.0.1:<port>), which serves the metrics.
	UI string

	home     string
	mu       sync.Mutex
	proc     *process
	restarts int
	stop     chan struct{}
	watch    *executorWatch
}

// jobJars are the job's jar (the shaded strata-ingest.jar the image carries), the shuffle
// plugin's (strata-shuffle.jar), and the jars of the image's Spark distribution, each once
// (jvm/ingest-job/pom.xml lists them in target/spark-classpath-{compile,runtime}.txt).
func jobJars(t testing.TB) (ingestJar, shuffleJar string, sparkJars []string) {
	t.Helper()
	jvm := buildJVM(t)
	seen := map[string]bool{}
	for _, scope := range []string{"compile", "runtime"} {
		b, err := os.ReadFile(filepath.Join(jvm, "ingest-job", "target", "spark-classpath-"+scope+".txt"))
		if err != nil {
			t.Fatal(err)
		}
		for _, jar := range filepath.SplitList(strings.TrimSpace(string(b))) {
			if !seen[jar] {
				seen[jar] = true
				sparkJars = append(sparkJars, jar)
			}
		}
	}
	return filepath.Join(jvm, "ingest-job", "target", "strata-ingest.jar"),
		filepath.Join(jvm, "shuffle-plugin", "target", "strata-shuffle.jar"), sparkJars
}

// jobEndpoints are where the lab's job finds what a cluster gives it by name: the brokers, the
// search node, the jars of the image, and directories for what lives on its volumes.
type jobEndpoints struct {
	Bootstrap, SearchURL, ShuffleJar, Dir string
	UIPort                                int
}

// localConf is the SparkApplication's sparkConf as a run on this machine needs it. Only what names the
// cluster changes: the Kafka and search endpoints (the lab's brokers and node speak plaintext
// without users, so the SASL and CA keys go; IngestJobTest and IngestTlsTest cover them), the
// image paths of the jars, the volumes' mount paths (the checkpoint, the shuffle tiers), and the
// UI port. Every other key, the job's and the metrics' included, is the operator's.
func localConf(conf map[string]string, e jobEndpoints) map[string]string {
	out := map[string]string{}
	for k, v := range conf {
		if strings.HasPrefix(k, "spark.kubernetes.") || strings.HasPrefix(k, "spark.executorEnv.") {
			continue // read only by Spark's Kubernetes scheduler and the executor pods
		}
		if strings.HasPrefix(k, "spark.es.") {
			continue // elasticsearch-hadoop's, for a job of the user's; Strata's reads spark.strata.*
		}
		out[k] = v
	}
	for _, k := range []string{desired.KafkaSaslJaasEnvConf, desired.ESCAPathConf, desired.ESUserEnvConf, desired.ESPasswordEnvConf} {
		delete(out, k)
	}
	out[desired.KafkaBootstrapConf] = e.Bootstrap
	out[desired.ESURLConf] = e.SearchURL
	out[desired.CheckpointDirConf] = filepath.Join(e.Dir, "checkpoint")
	if dirs, ok := out[desired.ShuffleDataDirsConf]; ok {
		out[desired.ShuffleDataDirsConf] = rebase(dirs, e.Dir)
	}
	// Spark's local directories (the spill tier) are the spark-local-dir-* volumes in a pod.
	out["spark.local.dir"] = filepath.Join(e.Dir, "spill")
	if jars, ok := out["spark.jars"]; ok {
		out["spark.jars"] = strings.ReplaceAll(jars, desired.DefaultShufflePluginJar, e.ShuffleJar)
	}
	out["spark.ui.port"] = strconv.Itoa(e.UIPort)
	return out
}

// rebase moves each of the comma-separated absolute paths under dir.
func rebase(paths, dir string) string {
	parts := strings.Split(paths, ",")
	for i, p := range parts {
		parts[i] = filepath.Join(dir, p)
	}
	return strings.Join(parts, ",")
}

// submitArgs are spark-submit's arguments for the job, as the Spark operator passes them
// (kubeflow/spark-operator v2.5.2, internal/controller/sparkapplication/submission.go: --name is
// the SparkApplication's name, --class its mainClass, every sparkConf entry a --conf, then the
// driver's and executors' typed fields (podConf), the main application file last) with a
// local-cluster master in place of the cluster's.
func submitArgs(name, master string, conf map[string]string, pod [][2]string, jar string) []string {
	args := []string{"--master", master, "--name", name, "--class", desired.IngestJobMainClass}
	keys := make([]string, 0, len(conf))
	for k := range conf {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		args = append(args, "--conf", k+"="+conf[k])
	}
	for _, kv := range pod {
		args = append(args, "--conf", kv[0]+"="+kv[1])
	}
	return append(args, jar)
}

// localClusterMaster is the master that runs the executors the SparkApplication asks for as
// local processes: local-cluster[workers,cores,memory], one worker per executor, each with the
// executor's cores and its heap in MiB (Spark refuses a worker smaller than spark.executor.memory).
func localClusterMaster(pod [][2]string) (string, error) {
	get := func(k string) string {
		for _, kv := range pod {
			if kv[0] == k {
				return kv[1]
			}
		}
		return ""
	}
	instances, cores, memory := get("spark.executor.instances"), get("spark.executor.cores"), get("spark.executor.memory")
	if instances == "" || cores == "" || memory == "" {
		return "", fmt.Errorf("the SparkApplication names no executor instances, cores or memory: %v", pod)
	}
	mib, err := mebibytes(memory)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("local-cluster[%s,%s,%d]", instances, cores, mib), nil
}

// StartIngestJob submits p's job (the conf desired.SparkConf builds for it, localConf's changes
// aside, and the SparkApplication's driver and executor sizes) against the lab's brokers and
// search node, and returns once its driver serves metrics, with the driver pod the Spark operator
// would run it in for AddPod. With cadvisor, each executor is reported as its pod's container.
// The driver reaches the lab's control plane with kubeconfig, as its pod's ServiceAccount token
// reaches the cluster's: it reads its executor target there (desired.ExecutorTarget).
func StartIngestJob(t testing.TB, dir string, p *v1alpha1.AnalyticsPipeline, k *Kafka, s *Search, cadvisor *CAdvisor, kubeconfig string) *IngestJob {
	t.Helper()
	if !desired.RunsIngestJob(p) {
		t.Fatalf("pipeline %s runs a job of its own, not Strata's", p.Name)
	}
	ingestJar, shuffleJar, sparkJars := jobJars(t)
	port := freePort(t)
	in := desired.Inputs{Pipeline: p, Plan: *p.Status.Plan}
	name := desired.SparkApplicationName(p)
	conf := localConf(desired.SparkConf(in), jobEndpoints{
		Bootstrap: k.Bootstrap, SearchURL: s.URL, ShuffleJar: shuffleJar, Dir: filepath.Join(dir, "job"), UIPort: port,
	})
	// The volumes a pod mounts exist before the job starts (the shuffle plugin checks its
	// directories at start).
	for _, d := range append(strings.Split(conf[desired.ShuffleDataDirsConf], ","), conf["spark.local.dir"], filepath.Dir(conf[desired.CheckpointDirConf])) {
		if err := os.MkdirAll(d, 0o755); d != "" && err != nil {
			t.Fatal(err)
		}
	}
	pod := podConf(desired.SparkApplication(in))
	master, err := localClusterMaster(pod)
	if err != nil {
		t.Fatal(err)
	}
	j := &IngestJob{UI: fmt.Sprintf("http://127.0.0.1:%d", port), stop: make(chan struct{}), home: sparkHome(t, dir, sparkJars),
		watch: &executorWatch{namespace: p.Namespace, app: name, cadvisor: cadvisor, known: map[int]Executor{}}}
	submit := sparkSubmitCommand(t, j.home, submitArgs(name, master, conf, pod, ingestJar))
	submit.Env = append(submit.Env, "KUBECONFIG="+kubeconfig)
	command := func() *exec.Cmd {
		cmd := exec.Command(submit.Path, submit.Args[1:]...)
		cmd.Env = submit.Env
		// The driver leads a process group with its executors, which Pause and the end of the
		// test reach together, as all containers of the job's pods.
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		return cmd
	}
	j.proc = start(t, dir, "ingest-job", command())
	go j.supervise(dir, command)
	go j.watch.watch(func() int { return j.current().Pid() }, j.stop)
	t.Cleanup(func() {
		close(j.stop)
		j.mu.Lock()
		defer j.mu.Unlock()
		_ = syscall.Kill(-j.proc.Pid(), syscall.SIGKILL)
		if j.restarts > 0 {
			j.proc.End(t)
		}
		if t.Failed() {
			j.logExecutors(t)
		}
	})
	// The job's first act once Spark runs is to put its index lifecycle, the write index
	// included; then it starts its query.
	index := s.URL + "/" + desired.ElasticsearchIndex(p)
	for _, u := range []string{j.UI + SparkExecutorMetricsPath, index} {
		if err := waitHTTP(http.DefaultClient, j.proc, u, 3*time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	j.Pod = DriverPod(p, fmt.Sprintf("127.0.0.1:%d", port))
	return j
}

// logExecutors logs the end of each executor's log (the standalone worker writes them under
// $SPARK_HOME/work/<application>/<executor>/).
func (j *IngestJob) logExecutors(t testing.TB) {
	logs, _ := filepath.Glob(filepath.Join(j.home, "work", "*", "*", "stderr"))
	for _, f := range logs {
		if b, err := os.ReadFile(f); err == nil {
			t.Logf("executor log %s (last 4 KiB):\n%s", f, proc.Tail(b, 4096))
		}
	}
}

// SparkExecutorMetricsPath is where a driver's UI serves its executors' metrics in Prometheus'
// format (spark.ui.prometheus.enabled; Spark's PrometheusResource), the strata-spark-drivers
// PodMonitor's path.
const SparkExecutorMetricsPath = "/metrics/executors/prometheus"

// DriverPod is the driver pod of p's SparkApplication as the Spark operator and Spark label it:
// the operator names it <app>-driver (kubeflow/spark-operator v2.5.2, pkg/util/sparkapplication.go
// GetDriverPodName) and adds sparkoperator.k8s.io/app-name and launched-by-spark-operator
// (internal/controller/sparkapplication/submission.go, driverConfOption); Spark adds spark-role
// and names the container and its UI port (resource-managers/kubernetes Constants:
// spark-kubernetes-driver, spark-ui).
func DriverPod(p *v1alpha1.AnalyticsPipeline, address string) Pod {
	app := desired.SparkApplicationName(p)
	return Pod{Namespace: p.Namespace, Name: app + "-driver", Container: desired.SparkDriverContainer,
		PortName: "spark-ui", Address: address, Labels: map[string]string{
			"spark-role":                    "driver",
			"spark-app-name":                app,
			"sparkoperator.k8s.io/app-name": app,
			"sparkoperator.k8s.io/launched-by-spark-operator": "true",
		}}
}

// supervise submits the job again, with the same arguments, each time its JVM exits, after the
// restart interval, until the test ends.
func (j *IngestJob) supervise(dir string, command func() *exec.Cmd) {
	for {
		j.mu.Lock()
		p := j.proc
		j.mu.Unlock()
		select {
		case <-j.stop:
			return
		case <-p.Done():
		}
		// The driver is gone: so are its executors, as a driver pod's executor pods are
		// deleted with it (they exit by themselves once the driver's connection drops).
		_ = syscall.Kill(-p.Pid(), syscall.SIGKILL)
		select {
		case <-j.stop:
			return
		case <-time.After(desired.RestartRetryInterval * time.Second):
		}
		j.mu.Lock()
		select {
		case <-j.stop: // the test ended while this waited
			j.mu.Unlock()
			return
		default:
		}
		next, err := launch(dir, fmt.Sprintf("ingest-job-%d", j.restarts+1), command())
		if err == nil {
			j.proc = next
			j.restarts++
		}
		j.mu.Unlock()
		if err != nil {
			return // Running reports the job gone
		}
	}
}

func (j *IngestJob) current() *process {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.proc
}

// Pause freezes the job (SIGSTOP to its driver and executors), as a job stalled in a long GC
// or on a dead disk.
func (j *IngestJob) Pause() { _ = syscall.Kill(-j.current().Pid(), syscall.SIGSTOP) }

// Resume lets the paused job go on.
func (j *IngestJob) Resume() { _ = syscall.Kill(-j.current().Pid(), syscall.SIGCONT) }

// Running says whether the job's driver runs (between a failure and its restart it does not).
func (j *IngestJob) Running() bool { return j.current().Running() }

// Executors are the job's running executors (as root, each reported as its pod by cAdvisor).
func (j *IngestJob) Executors() []Executor { return j.watch.executors() }

// Restarts is how often the job was submitted again after its JVM exited.
func (j *IngestJob) Restarts() int {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.restarts
}
