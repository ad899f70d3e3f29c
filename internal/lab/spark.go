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
	"testing"
	"time"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/internal/desired"
)

// IngestJob is the pipeline's own Spark job (jvm/ingest-job, the job of the SparkApplication the
// operator builds) run by spark-submit in Spark local mode: the driver and its one executor share
// a JVM, whose tasks read the lab's topic and write to the lab's search node, committing the
// pipeline's consumer group as the job does in a cluster. Its driver serves Spark's metrics on
// its UI port as the driver pod does, scraped through the strata-spark-drivers PodMonitor.
//
// When the job's JVM exits (its query failed), the lab submits it again after the restart
// policy's interval, from the same checkpoint, as the Spark operator does with the
// SparkApplication's restartPolicy (desired.RestartType, RestartRetryInterval).
type IngestJob struct {
	Pod Pod
	// UI is the driver's UI (http://127.0.0.1:<port>), which serves the metrics.
	UI string

	mu       sync.Mutex
	proc     *process
	restarts int
	stop     chan struct{}
}

// LocalCores is the local master's task slots, the machine's two cores: every Kafka partition
// of a micro-batch gets a task, LocalCores at a time. TaskMaxFailures is
// how often a task may fail, spark.task.maxFailures' default on a cluster: a local master
// without it (local[N]) fails the query at a task's first failure, so a job paused for longer
// than the Kafka client's timeouts would die where a cluster's retries the task.
const (
	LocalCores      = 2
	TaskMaxFailures = 4
)

// jobClasspath is the job's jar (the shaded strata-ingest.jar the image carries), the shuffle
// plugin's (strata-shuffle.jar), and the class path standing in for the image's Spark
// distribution (jvm/ingest-job/pom.xml writes it to target/spark-classpath-{compile,runtime}.txt).
func jobClasspath(t testing.TB) (ingestJar, shuffleJar, classpath string) {
	t.Helper()
	jvm := buildJVM(t)
	var jars []string
	seen := map[string]bool{}
	for _, scope := range []string{"compile", "runtime"} {
		b, err := os.ReadFile(filepath.Join(jvm, "ingest-job", "target", "spark-classpath-"+scope+".txt"))
		if err != nil {
			t.Fatal(err)
		}
		for _, jar := range filepath.SplitList(strings.TrimSpace(string(b))) {
			if !seen[jar] {
				seen[jar] = true
				jars = append(jars, jar)
			}
		}
	}
	return filepath.Join(jvm, "ingest-job", "target", "strata-ingest.jar"),
		filepath.Join(jvm, "shuffle-plugin", "target", "strata-shuffle.jar"),
		strings.Join(jars, string(os.PathListSeparator))
}

// jobEndpoints are where the lab's job finds what a cluster gives it by name: the brokers, the
// search node, the jars of the image, and directories for what lives on its volumes.
type jobEndpoints struct {
	Bootstrap, SearchURL, ShuffleJar, Dir string
	UIPort                                int
}

// localConf is the SparkApplication's sparkConf as a local-mode run needs it. Only what names the
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
// the SparkApplication's name, --class its mainClass, every sparkConf entry a --conf, the main
// application file last) with a local master in place of the cluster's.
func submitArgs(name string, conf map[string]string, jar string) []string {
	args := []string{"--master", fmt.Sprintf("local[%d,%d]", LocalCores, TaskMaxFailures), "--name", name, "--class", desired.IngestJobMainClass}
	keys := make([]string, 0, len(conf))
	for k := range conf {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		args = append(args, "--conf", k+"="+conf[k])
	}
	return append(args, jar)
}

// sparkJVMOptions are the options Spark's launcher adds on Java 17 (JavaModuleOptions), which
// spark-submit in the image adds too (jvm/pom.xml spark.test.jvm.options lists the same).
var sparkJVMOptions = []string{
	"-XX:+IgnoreUnrecognizedVMOptions", "--add-modules=jdk.incubator.vector",
	"--add-opens=java.base/java.lang=ALL-UNNAMED", "--add-opens=java.base/java.lang.invoke=ALL-UNNAMED",
	"--add-opens=java.base/java.lang.reflect=ALL-UNNAMED", "--add-opens=java.base/java.io=ALL-UNNAMED",
	"--add-opens=java.base/java.net=ALL-UNNAMED", "--add-opens=java.base/java.nio=ALL-UNNAMED",
	"--add-opens=java.base/java.util=ALL-UNNAMED", "--add-opens=java.base/java.util.concurrent=ALL-UNNAMED",
	"--add-opens=java.base/java.util.concurrent.atomic=ALL-UNNAMED", "--add-opens=java.base/jdk.internal.ref=ALL-UNNAMED",
	"--add-opens=java.base/sun.nio.ch=ALL-UNNAMED", "--add-opens=java.base/sun.nio.cs=ALL-UNNAMED",
	"--add-opens=java.base/sun.security.action=ALL-UNNAMED", "--add-opens=java.base/sun.util.calendar=ALL-UNNAMED",
	"-Djdk.reflect.useDirectMethodHandle=false", "-Dio.netty.tryReflectionSetAccessible=true",
}

// StartIngestJob submits p's job (the conf desired.SparkConf builds for it, localConf's changes
// aside) against the lab's brokers and search node, and returns once its driver serves metrics,
// with the driver pod the Spark operator would run it in for AddPod.
func StartIngestJob(t testing.TB, dir string, p *v1alpha1.AnalyticsPipeline, k *Kafka, s *Search) *IngestJob {
	t.Helper()
	if !desired.RunsIngestJob(p) {
		t.Fatalf("pipeline %s runs a job of its own, not Strata's", p.Name)
	}
	ingestJar, shuffleJar, classpath := jobClasspath(t)
	port := freePort(t)
	name := desired.SparkApplicationName(p)
	conf := localConf(desired.SparkConf(desired.Inputs{Pipeline: p, Plan: *p.Status.Plan}), jobEndpoints{
		Bootstrap: k.Bootstrap, SearchURL: s.URL, ShuffleJar: shuffleJar, Dir: filepath.Join(dir, "job"), UIPort: port,
	})
	// The volumes a pod mounts exist before the job starts (the shuffle plugin checks its
	// directories at start).
	for _, d := range append(strings.Split(conf[desired.ShuffleDataDirsConf], ","), conf["spark.local.dir"], filepath.Dir(conf[desired.CheckpointDirConf])) {
		if err := os.MkdirAll(d, 0o755); d != "" && err != nil {
			t.Fatal(err)
		}
	}
	// The driver's heap; the off-heap pool the plan sets is allocated only as Tungsten uses it.
	args := append([]string{"-Xms128m", "-Xmx768m", "-XX:+UseSerialGC"}, sparkJVMOptions...)
	args = append(args, "-cp", classpath, "org.apache.spark.deploy.SparkSubmit")
	args = append(args, submitArgs(name, conf, ingestJar)...)
	j := &IngestJob{UI: fmt.Sprintf("http://127.0.0.1:%d", port), stop: make(chan struct{})}
	command := func() *exec.Cmd { return exec.Command(java(), args...) }
	j.proc = start(t, dir, "ingest-job", command())
	go j.supervise(dir, command)
	t.Cleanup(func() {
		close(j.stop)
		j.mu.Lock()
		defer j.mu.Unlock()
		if j.restarts > 0 {
			j.proc.end(t)
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
		case <-p.done:
		}
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

// Pause freezes the job (SIGSTOP), as a job stalled in a long GC or on a dead disk.
func (j *IngestJob) Pause() { j.current().Pause() }

// Resume lets the paused job go on.
func (j *IngestJob) Resume() { j.current().Resume() }

// Running says whether the job's JVM runs (between a failure and its restart it does not).
func (j *IngestJob) Running() bool { return j.current().Running() }

// Restarts is how often the job was submitted again after its JVM exited.
func (j *IngestJob) Restarts() int {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.restarts
}
