package lab

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/internal/desired"
	"github.com/strata-dev/strata/internal/testutil"
)

// Search is the lab's search server: one OpenSearch node (jvm/lab Search.java) in the cluster
// named after the pipeline's Elasticsearch, with a write thread pool small enough that the
// saturation scenario's concurrent bulk requests overflow it.
type Search struct {
	URL  string // http://127.0.0.1:<port>
	Node string // the node's name: the pod name ECK gives the first data node
	// WriteThreads and WriteQueue size the node's write thread pool (searchWriteQueue).
	WriteThreads, WriteQueue int
	proc                     *process
}

// searchWriteQueue is the lab node's write queue for p: twice the shard writes p's job sends at
// once. Each executor core runs a task whose bulk requests go to each primary shard of the
// index, so the healthy job is not rejected (a queue of 4 was: the SparkApplication's 2
// executors of 5 cores, once they ran as such, tripped IndexingSaturated in the healthy lab),
// while the saturation scenario's clients, a multiple of the pool, overflow it.
func searchWriteQueue(p *v1alpha1.AnalyticsPipeline) int {
	pl := p.Status.Plan
	return 2 * int(max(pl.Executors, 1)*max(pl.ExecutorCores, 1)*max(pl.Shards, 1))
}

// StartSearch starts the search node for p and waits until it answers.
func StartSearch(t testing.TB, dir string, p *v1alpha1.AnalyticsPipeline) *Search {
	t.Helper()
	port := freePort(t)
	s := &Search{
		URL:          fmt.Sprintf("http://127.0.0.1:%d", port),
		Node:         desired.ElasticsearchStatefulSetName(p, desired.DataNodeSet) + "-0",
		WriteThreads: 1,
		WriteQueue:   searchWriteQueue(p),
	}
	s.proc = start(t, dir, "search", javaCommand(t, "384m", "search", filepath.Join(dir, "search"),
		desired.ElasticsearchName(p), s.Node, strconv.Itoa(port),
		strconv.Itoa(s.WriteThreads), strconv.Itoa(s.WriteQueue)))
	if err := waitHTTP(http.DefaultClient, s.proc, s.URL+"/_cluster/health?wait_for_status=yellow", 3*time.Minute); err != nil {
		t.Fatal(err)
	}
	return s
}

// ExporterExample is the Elasticsearch exporter Deployment Strata documents, for the sample
// pipeline: config/prometheus/elasticsearch-exporter.yaml.
const ExporterExample = "config/prometheus/elasticsearch-exporter.yaml"

// ExampleExporter reads the exporter Deployment, its name, namespace, labels and arguments
// rewritten for p as the file tells users to (the sample's name replaced by the pipeline's).
func ExampleExporter(p *v1alpha1.AnalyticsPipeline) (*appsv1.Deployment, error) {
	b, err := os.ReadFile(filepath.Join(testutil.Root(), ExporterExample))
	if err != nil {
		return nil, err
	}
	text := strings.ReplaceAll(string(b), "sensors", p.Name)
	text = strings.ReplaceAll(text, "namespace: default", "namespace: "+p.Namespace)
	text = strings.ReplaceAll(text, ".default.svc", "."+p.Namespace+".svc")
	var d appsv1.Deployment
	if err := yaml.UnmarshalStrict([]byte(text), &d); err != nil {
		return nil, fmt.Errorf("%s: %w", ExporterExample, err)
	}
	return &d, nil
}

// exporterContainer is the Deployment's exporter container and its metrics port.
func exporterContainer(d *appsv1.Deployment) (corev1.Container, corev1.ContainerPort, error) {
	for _, c := range d.Spec.Template.Spec.Containers {
		for _, port := range c.Ports {
			if port.Name == "metrics" {
				return c, port, nil
			}
		}
	}
	return corev1.Container{}, corev1.ContainerPort{}, fmt.Errorf("%s: no container with a port named metrics", ExporterExample)
}

// exporterArgs are the Deployment's arguments for the lab: --es.uri pointed at the lab's node
// instead of ECK's Service, and no --es.ca (the lab's node speaks plain HTTP; the ingestion job's
// TLS tests cover ECK's CA). Every other flag is the Deployment's.
func exporterArgs(c corev1.Container, url, listen string) []string {
	args := []string{"--web.listen-address=" + listen}
	for _, a := range c.Args {
		switch {
		case strings.HasPrefix(a, "--es.uri="):
			args = append(args, "--es.uri="+url)
		case strings.HasPrefix(a, "--es.ca="):
		default:
			args = append(args, a)
		}
	}
	return args
}

// ElasticsearchExporter is the exporter of the example Deployment, run against the lab's node.
type ElasticsearchExporter struct {
	Pod  Pod
	proc *process
}

// StartElasticsearchExporter runs the pinned elasticsearch_exporter ($STRATA_ELASTICSEARCH_EXPORTER,
// else hack/tools.sh's build) with the example Deployment's arguments against s, and returns it
// with the pod the Deployment would run it in (labels, container and port names), for AddPod.
func StartElasticsearchExporter(t testing.TB, dir string, p *v1alpha1.AnalyticsPipeline, s *Search) *ElasticsearchExporter {
	t.Helper()
	d, err := ExampleExporter(p)
	if err != nil {
		t.Fatal(err)
	}
	c, port, err := exporterContainer(d)
	if err != nil {
		t.Fatal(err)
	}
	addr := testutil.FreePort(t)
	bin := testutil.Tool(t, "elasticsearch_exporter", "STRATA_ELASTICSEARCH_EXPORTER")
	proc := start(t, dir, "elasticsearch-exporter", exec.Command(bin, exporterArgs(c, s.URL, addr)...))
	if err := waitHTTP(http.DefaultClient, proc, "http://"+addr+"/healthz", time.Minute); err != nil {
		t.Fatal(err)
	}
	return &ElasticsearchExporter{proc: proc, Pod: Pod{
		Namespace: d.Namespace, Name: d.Name + "-7f9d6c5b48-q2w8z", Container: c.Name, PortName: port.Name,
		Address: addr, Labels: d.Spec.Template.Labels,
	}}
}
