package lab

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/strata-dev/strata/internal/desired"
)

// The lab runs the operator's own Spark configuration: localConf may change only what names the
// cluster (endpoints, credentials, image and volume paths, the UI port), and leaves nothing that
// names it.
func TestLocalConfChangesOnlyTheClusterNames(t *testing.T) {
	p, err := Pipeline(labOptions())
	if err != nil {
		t.Fatal(err)
	}
	conf := desired.SparkConf(desired.Inputs{Pipeline: p, Plan: *p.Status.Plan})
	if conf[desired.PipelineConf] != p.Name {
		t.Fatalf("the lab's pipeline does not run Strata's job: %s = %q", desired.PipelineConf, conf[desired.PipelineConf])
	}
	dir := t.TempDir()
	got := localConf(conf, jobEndpoints{Bootstrap: "127.0.0.1:9092", SearchURL: "http://127.0.0.1:9200",
		ShuffleJar: "/build/strata-shuffle.jar", Dir: dir, UIPort: 4041})

	changed := map[string]string{
		desired.KafkaBootstrapConf:  "127.0.0.1:9092",
		desired.ESURLConf:           "http://127.0.0.1:9200",
		desired.CheckpointDirConf:   filepath.Join(dir, "checkpoint"),
		desired.ShuffleDataDirsConf: filepath.Join(dir, conf[desired.ShuffleDataDirsConf]),
		"spark.local.dir":           filepath.Join(dir, "spill"),
		"spark.jars":                "/build/strata-shuffle.jar",
		"spark.ui.port":             "4041",
	}
	dropped := []string{desired.KafkaSaslJaasEnvConf, desired.ESCAPathConf, desired.ESUserEnvConf, desired.ESPasswordEnvConf}
	for k, v := range conf {
		switch {
		case strings.HasPrefix(k, "spark.kubernetes.") || strings.HasPrefix(k, "spark.executorEnv.") ||
			strings.HasPrefix(k, "spark.es.") || slices.Contains(dropped, k):
			if _, ok := got[k]; ok {
				t.Errorf("%s kept; it names the cluster", k)
			}
		case changed[k] != "":
		case got[k] != v:
			t.Errorf("%s = %q, want the operator's %q", k, got[k], v)
		}
	}
	for k, want := range changed {
		if got[k] != want {
			t.Errorf("%s = %q, want %q", k, got[k], want)
		}
	}
	for k, v := range got {
		for _, cluster := range []string{".svc", "local://", "/etc/strata"} {
			if strings.Contains(v, cluster) || strings.HasPrefix(v, "/var/data") {
				t.Errorf("%s = %q still names the cluster (%s)", k, v, cluster)
			}
		}
	}
}

// spark-submit gets the SparkApplication's name (the application_name the alerts select by),
// the job's class, every setting once, the typed driver and executor fields after them (so they
// win), and the jar last, as the Spark operator passes them.
func TestSubmitArgsAsTheSparkOperator(t *testing.T) {
	got := submitArgs("lab", "local-cluster[2,5,5585]", map[string]string{"spark.b": "2", "spark.a": "1=x"},
		[][2]string{{"spark.executor.instances", "2"}, {"spark.a", "3"}}, "/job.jar")
	want := []string{"--master", "local-cluster[2,5,5585]", "--name", "lab", "--class", desired.IngestJobMainClass,
		"--conf", "spark.a=1=x", "--conf", "spark.b=2", "--conf", "spark.executor.instances=2", "--conf", "spark.a=3", "/job.jar"}
	if !slices.Equal(got, want) {
		t.Errorf("submitArgs = %q, want %q", got, want)
	}
}

// The lab's executors are the SparkApplication's: as many, with its cores and heap, and its
// driver's and executors' sizes and Java options reach spark-submit as the operator passes them.
func TestLocalClusterRunsTheSparkApplicationsExecutors(t *testing.T) {
	p, err := Pipeline(labOptions())
	if err != nil {
		t.Fatal(err)
	}
	in := desired.Inputs{Pipeline: p, Plan: *p.Status.Plan}
	pod := podConf(desired.SparkApplication(in))
	got := map[string]string{}
	for _, kv := range pod {
		got[kv[0]] = kv[1]
	}
	pl := p.Status.Plan
	heap := desired.SparkSize(pl.ExecutorMemory.Heap.Value())
	want := map[string]string{
		"spark.driver.cores": fmt.Sprint(desired.DriverCores), "spark.driver.memory": desired.DriverMemory,
		"spark.executor.instances": fmt.Sprint(pl.Executors), "spark.executor.cores": fmt.Sprint(pl.ExecutorCores),
		"spark.executor.memory":           heap,
		"spark.executor.memoryOverhead":   desired.SparkSize(pl.ExecutorMemory.Overhead.Value() + pl.ExecutorMemory.PageCache.Value()),
		"spark.executor.extraJavaOptions": desired.ExecutorJavaOptions(in),
	}
	if !maps.Equal(got, want) {
		t.Errorf("podConf = %v, want %v", got, want)
	}
	mib, err := mebibytes(heap)
	if err != nil {
		t.Fatal(err)
	}
	master, err := localClusterMaster(pod)
	if wantMaster := fmt.Sprintf("local-cluster[%d,%d,%d]", pl.Executors, pl.ExecutorCores, mib); err != nil || master != wantMaster {
		t.Errorf("localClusterMaster = %q %v, want %q", master, err, wantMaster)
	}
	if _, err := localClusterMaster(pod[:2]); err == nil {
		t.Error("localClusterMaster without the executors' fields: no error")
	}
}

// What Spark's launcher prints for bin/spark-class is what it says to the user, a NUL line, then
// the command, NUL-ended arguments, led by env and its assignments when the command needs
// environment of its own.
func TestLaunchCommand(t *testing.T) {
	for _, c := range []struct {
		out       string
		argv, env []string
	}{
		{"\x00\n/usr/bin/java\x00-cp\x00/x/*\x00Main\x00", []string{"/usr/bin/java", "-cp", "/x/*", "Main"}, nil},
		{"a warning\n\x00\njava\x00Main\x00", []string{"java", "Main"}, nil},
		{"\x00\nenv\x00A=1\x00B=x=y\x00java\x00-Dk=v\x00", []string{"java", "-Dk=v"}, []string{"A=1", "B=x=y"}},
	} {
		argv, env, err := launchCommand([]byte(c.out))
		if err != nil || !slices.Equal(argv, c.argv) || !slices.Equal(env, c.env) {
			t.Errorf("launchCommand(%q) = %q %q %v, want %q %q", c.out, argv, env, err, c.argv, c.env)
		}
	}
	if _, _, err := launchCommand(nil); err == nil {
		t.Error("launchCommand of nothing: no error")
	}
}

// Executors are found by their command line as the standalone worker starts them, and named as
// Spark names executor pods, which the alerts' and the autoscaler's pod patterns match.
func TestExecutorsAsTheirPods(t *testing.T) {
	cmdline := strings.Join([]string{"/usr/bin/java", "-cp", "/h/jars/*", "-Xmx5585M", executorBackend, "--driver-url",
		"spark://CoarseGrainedScheduler@127.0.0.1:41965", "--executor-id", "1", "--hostname", "127.0.0.1", "--cores", "5",
		"--app-id", "app-20261125192546-0000", "--worker-url", "spark://Worker@127.0.0.1:44435"}, "\x00") + "\x00"
	id, app, ok := parseExecutor([]byte(cmdline))
	if !ok || id != "1" || app != "app-20261125192546-0000" {
		t.Fatalf("parseExecutor = %q %q %v", id, app, ok)
	}
	if _, _, ok := parseExecutor([]byte("java\x00org.apache.spark.deploy.SparkSubmit\x00--executor-id\x001\x00")); ok {
		t.Error("a driver's command line read as an executor's")
	}
	pod := ExecutorPodName("lab", app, id)
	if !regexp.MustCompile(`^lab-[0-9a-f]{16}-exec-1$`).MatchString(pod) {
		t.Errorf("ExecutorPodName = %q", pod)
	}
	if other := ExecutorPodName("lab", "app-20261125192546-0001", id); other == pod {
		t.Errorf("a new submission's executor has the same pod name %q", pod)
	}
}

// sparkJob checks the lab's running job as the alerts and dashboards see it: its driver is a
// target of the strata-spark-drivers PodMonitor with the pod's labels, its executor metrics
// carry the SparkApplication's name (application_name), so that they join the pipeline as the
// alerts join them, and its records reach the search node.
func sparkJob(t *testing.T, ctx context.Context, l *Lab) {
	prom := l.Prometheus
	driver := l.Job.Pod
	up := fmt.Sprintf(`up{pod=%q}`, driver.Name)
	r, ok := prom.WaitFor(ctx, up, time.Minute, func(r Result) bool { return len(r.Series) == 1 && r.Series[0].Value == 1 })
	if !ok {
		t.Fatalf("%s: %v, want the driver up", up, r)
	}
	for k, v := range map[string]string{"job": MonitorNamespace + "/strata-spark-drivers", "namespace": PipelineNamespace,
		"container": desired.SparkDriverContainer, "endpoint": "spark-ui"} {
		if got := r.Series[0].Labels[k]; got != v {
			t.Errorf("%s: %s=%q, want %q (all: %v)", up, k, got, v, r.Series[0].Labels)
		}
	}
	// The SparkApplication's executors, each a JVM of its own: their metrics come through the
	// driver under their executor IDs and join the pipeline as the alerts join them
	// (internal/alerts/promql.go, Scope.spark, which leaves the driver out). Each has completed
	// tasks once the job has run a micro-batch with a task on it: TestLab waited for the job to
	// catch up, a scrape more shows them.
	pl := l.Pipeline.Status.Plan
	if got := len(l.Job.Executors()); got != int(pl.Executors) {
		t.Errorf("%d executor JVMs run, want the plan's %d", got, pl.Executors)
	}
	join := fmt.Sprintf(`count by (namespace, pipeline) ((label_replace(metrics_executor_completedTasks_total{executor_id!="driver"} > 0, "spark_application", "$1", "application_name", "(.+)"))`+
		` * on (namespace, spark_application) group_left (pipeline) strata_pipeline_info{namespace=%q, pipeline=%q})`, PipelineNamespace, l.Pipeline.Name)
	if r, ok := prom.WaitFor(ctx, join, 2*time.Minute, func(r Result) bool {
		return r.Err == nil && len(r.Series) == 1 && r.Series[0].Value == float64(pl.Executors)
	}); !ok {
		names := prom.Query(ctx, `max by (application_name, executor_id) (metrics_executor_completedTasks_total)`)
		t.Errorf("%s: %v, want the %d executors' completed tasks joined to the pipeline (completed tasks by executor: %v)",
			join, r, pl.Executors, names)
	}
	if l.CAdvisor == nil {
		t.Log("not root: the executors' container series (cAdvisor) are not checked")
	} else {
		// Each executor is its pod to cAdvisor, which the alerts' executor pattern maps back to
		// the SparkApplication and so to the pipeline.
		cache := fmt.Sprintf(`count by (namespace, pipeline) (label_replace(container_memory_cache{container=%q, pod=~".+-exec-[0-9]+"}, "spark_application", "$1", "pod", "(.+?)(?:-[0-9a-f]{10,16})?-exec-[0-9]+")`+
			` * on (namespace, spark_application) group_left (pipeline) strata_pipeline_info{namespace=%q, pipeline=%q})`, desired.SparkExecutorContainer, PipelineNamespace, l.Pipeline.Name)
		if r, ok := prom.WaitFor(ctx, cache, 2*time.Minute, func(r Result) bool { return len(r.Series) == 1 && r.Series[0].Value == float64(pl.Executors) }); !ok {
			t.Errorf("%s: %v, want the %d executor pods' page cache joined to the pipeline", cache, r, pl.Executors)
		}
		if err := l.Job.watch.failed(); err != nil {
			t.Errorf("putting the executors into cgroups: %v", err)
		}
	}
	count, err := searchCount(l.Search.URL + "/" + desired.ElasticsearchIndex(l.Pipeline) + "/_count")
	if err != nil || count == 0 {
		t.Errorf("documents in the job's index: %d %v, want the topic's records", count, err)
	} else {
		t.Logf("the job indexed %d documents", count)
	}
}

// searchCount is the count a _count request answers.
func searchCount(url string) (int64, error) {
	resp, err := http.Get(url)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	var body struct {
		Count int64 `json:"count"`
	}
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("%s: %s", url, resp.Status)
	}
	err = json.NewDecoder(resp.Body).Decode(&body)
	return body.Count, err
}
