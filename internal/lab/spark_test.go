package lab

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
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
	p, err := Pipeline(Options{Brokers: 3, ReplicationFactor: 3, MessagesPerSecond: labRecords, MessageBytes: labRecordBytes, ScrapeInterval: 10 * time.Second})
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
// the job's class, every setting once and the jar last, as the Spark operator passes them.
func TestSubmitArgsAsTheSparkOperator(t *testing.T) {
	got := submitArgs("lab", map[string]string{"spark.b": "2", "spark.a": "1=x"}, "/job.jar")
	want := []string{"--master", "local[2,4]", "--name", "lab", "--class", desired.IngestJobMainClass,
		"--conf", "spark.a=1=x", "--conf", "spark.b=2", "/job.jar"}
	if !slices.Equal(got, want) {
		t.Errorf("submitArgs = %q, want %q", got, want)
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
	r := prom.Query(ctx, up)
	if r.Err != nil || len(r.Series) != 1 || r.Series[0].Value != 1 {
		t.Fatalf("%s: %v %v, want the driver up", up, r.Series, r.Err)
	}
	for k, v := range map[string]string{"job": MonitorNamespace + "/strata-spark-drivers", "namespace": PipelineNamespace,
		"container": desired.SparkDriverContainer, "endpoint": "spark-ui"} {
		if got := r.Series[0].Labels[k]; got != v {
			t.Errorf("%s: %s=%q, want %q (all: %v)", up, k, got, v, r.Series[0].Labels)
		}
	}
	// The alerts' join (internal/alerts/promql.go, Scope.spark) without its executor_id filter:
	// in local mode the one executor is the driver.
	join := fmt.Sprintf(`sum by (namespace, pipeline) ((label_replace(metrics_executor_completedTasks_total, "spark_application", "$1", "application_name", "(.+)"))`+
		` * on (namespace, spark_application) group_left (pipeline) strata_pipeline_info{namespace=%q, pipeline=%q})`, PipelineNamespace, l.Pipeline.Name)
	if r := prom.Query(ctx, join); r.Err != nil || len(r.Series) != 1 || r.Series[0].Value <= 0 {
		names := prom.Query(ctx, `count by (application_name) (metrics_executor_completedTasks_total)`)
		t.Errorf("%s: %v %v, want the job's completed tasks joined to the pipeline (application_name of the series: %v)",
			join, r.Series, r.Err, names.Series)
	}
	count, err := searchCount(l.Search.URL + "/" + desired.ElasticsearchIndex(l.Pipeline) + "/_count")
	if err != nil || count == 0 {
		t.Errorf("documents in the job's index: %d %v, want the topic's records", count, err)
	}
	t.Logf("the job indexed %d documents", count)
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
