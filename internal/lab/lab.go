package lab

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/internal/alerts"
	"github.com/strata-dev/strata/internal/desired"
	"github.com/strata-dev/strata/internal/lab/netlab"
	"github.com/strata-dev/strata/internal/plan"
	"github.com/strata-dev/strata/internal/testutil"
	"github.com/strata-dev/strata/internal/testutil/gen"
)

// Options size the lab.
type Options struct {
	// Brokers is the Kafka nodes to start (the pipeline's broker count: spec.kafka.brokers is
	// pinned to it so the plan names it too, unless MaxBrokers is more).
	Brokers int
	// MaxBrokers, when above Brokers, is spec.kafka.brokers.max: the autoscaler may ask for more
	// brokers than run (the lab starts none of them; the decision is what is checked).
	MaxBrokers int
	// DeclaredMessagesPerSecond, when set, is spec.workload.messagesPerSecond in place of
	// MessagesPerSecond: a pipeline declaring less than its producer sends, whose plan keeps
	// Brokers brokers while the load needs more.
	DeclaredMessagesPerSecond int64
	// ReplicationFactor is spec.kafka.replicationFactor.
	ReplicationFactor int32
	// Workload is spec.workload: records per second and bytes each; the producer writes
	// MessagesPerSecond × MessageBytes bytes per second.
	MessagesPerSecond, MessageBytes int64
	// CatchUpMessagesPerSecond is spec.workload.consumerMessagesPerSecond, the rate the job
	// reads at when it is behind (its micro-batches hold desired.MicroBatchSeconds of it).
	CatchUpMessagesPerSecond int64
	// ScrapeInterval replaces the monitors' intervals and is Prometheus' evaluation interval;
	// the pipeline's autoscaling interval is set to it (so the autoscaler's $range is four scrapes).
	ScrapeInterval time.Duration
	// LinkBytesPerSecond is spec.network.linkBitsPerSecond / 8 when set (StartOnLinks shapes
	// each broker's link to it); Partitions is spec.kafka.topic.partitions when set.
	LinkBytesPerSecond int64
	Partitions         int32
	// AlertFor replaces every alert's `for:` in the lab's rule file (DefaultAlertFor when zero),
	// so scenarios see their alerts fire within a test; the expressions are Strata's own.
	AlertFor time.Duration
}

// KafkaVersion is the version of the lab's brokers (jvm/lab/pom.xml), the lab pipeline's
// spec.kafka.version: the Kafka exporter is told it as Strimzi tells it the Kafka's.
const KafkaVersion = "4.3.1"

// Namespaces of the lab's pipeline, of the monitors and of the operator (the alerts' defaults).
const (
	PipelineNamespace = "lab"
	MonitorNamespace  = "monitoring"
)

// Lab is a running lab.
type Lab struct {
	Pipeline   *v1alpha1.AnalyticsPipeline
	Kafka      *Kafka
	Prometheus *Prometheus
	Operator   *Operator
	Producer   *process
	// Consumer reads the topic as the pipeline's job does, committing to its consumer group
	// (StartOnLinks, whose brokers are in network namespaces); Start runs the job itself.
	Consumer *process
	// Job is the pipeline's ingestion job in Spark's local-cluster mode, reading the topic into
	// Search.
	Job           *IngestJob
	KafkaExporter *KafkaExporter
	// Search is the pipeline's search server, ElasticsearchExporter the exporter in front of it.
	Search                *Search
	ElasticsearchExporter *ElasticsearchExporter
	// CAdvisor reports the job's executors (Start) or the brokers (StartOnLinks) as their pods'
	// containers; nil without root.
	CAdvisor *CAdvisor
	// Generated is what the Prometheus Operator generated from the monitors and rules; the lab's
	// Prometheus runs its configuration as Rewrite changes it.
	Generated Generated
	// OperatorMonitor is the chart's ServiceMonitor.
	OperatorMonitor Monitor
	// Net is the lab's network namespaces and links (StartOnLinks; nil otherwise).
	Net *netlab.Lab

	dir string
	// discoveries are the generated configuration's service discoveries, whose targets the lab
	// writes.
	discoveries []Discovery
	mu          sync.Mutex
	pods        []Pod
}

// The lab's job is planned for the machines the lab runs on: 2 cores, shared with three
// brokers, a search node, Prometheus, a control plane and the operator (issue 26: the API
// example's two executors of 5 cores and 16 GiB ran 10 tasks and two 5.5 GiB heaps on 2
// cores, and fell behind a load it carried on an idle machine).
//   - two executors, the plan's minimum and maximum (the lab checks the executors' metrics
//     apart, and the autoscaler does not resize a job the lab started), of one core each:
//     the job runs as many tasks as the machine has cores;
//   - an executor carries the lab's whole workload several times over (make job-bench
//     measured about 4,800 records/s per core for records of 9 kB, docs/ingest-job.md), so
//     the plan needs no more than the minimum, even at the catch-up rate;
//   - a budget of 3 GiB, split as the API example splits its 16 GiB (half off-heap, a quarter
//     for the page cache): a heap of 960 MiB (-Xmx960M, -Xms480m as the plan sets them).
const (
	labExecutors          = 2
	labExecutorCores      = 1
	labRecordsPerExecutor = 1500
	labExecutorBudget     = "3Gi"
	labExecutorMinHeap    = "512Mi"
)

// Pipeline is the lab's pipeline, planned by internal/plan on the API example's tiers, Ready as
// the operator reports it once its children run.
func Pipeline(o Options) (*v1alpha1.AnalyticsPipeline, error) {
	interval := int32(o.ScrapeInterval / time.Second)
	p := gen.Pipeline(gen.SetName(PipelineNamespace, "lab"), gen.SetTopic("lab-events"),
		gen.SetWorkload(cmp.Or(o.DeclaredMessagesPerSecond, o.MessagesPerSecond), o.MessageBytes),
		gen.SetBrokers(int32(o.Brokers), int32(max(o.Brokers, o.MaxBrokers))),
		gen.SetExecutors(labExecutors, labExecutors, labExecutorCores),
		gen.SetSpec(func(s *v1alpha1.AnalyticsPipelineSpec) {
			s.Workload.ConsumerMessagesPerSecond = o.CatchUpMessagesPerSecond
			s.Spark.MessagesPerSecondPerExecutor = labRecordsPerExecutor
			s.Spark.Memory = v1alpha1.MemorySpec{Budget: gen.Q(labExecutorBudget), OffHeapPercent: 50, PageCachePercent: 25,
				MinHeap: ptr.To(gen.Q(labExecutorMinHeap))}
			s.Kafka.ReplicationFactor = o.ReplicationFactor
			s.Kafka.Version = KafkaVersion
			if o.LinkBytesPerSecond > 0 {
				s.Network.LinkBitsPerSecond = *resource.NewQuantity(o.LinkBytesPerSecond*8, resource.DecimalSI)
			}
			if o.Partitions > 0 {
				s.Kafka.Topic.Partitions = o.Partitions
			}
			// Strata's own ingestion job in the operator's image, which Start runs and which
			// follows the operator's executor target (the fixture names a job of the user's).
			s.Spark.Image, s.Spark.MainApplicationFile, s.Spark.MainClass = "", "", ""
		}),
		gen.SetAutoscaling(v1alpha1.AutoscalingSpec{Enabled: true, IntervalSeconds: interval}),
		gen.SetConditions(
			metav1.Condition{Type: v1alpha1.ConditionPlanValid, Status: metav1.ConditionTrue, Reason: v1alpha1.ReasonPlanned},
			metav1.Condition{Type: v1alpha1.ConditionReady, Status: metav1.ConditionTrue, Reason: "Ready"}))
	pl, err := plan.Fresh(p, gen.APITiers())
	if err != nil {
		return nil, err
	}
	if int(pl.Brokers) != o.Brokers {
		return nil, fmt.Errorf("the plan names %d brokers, the lab runs %d", pl.Brokers, o.Brokers)
	}
	p.Status.Plan = &pl
	return p, nil
}

// Start runs the lab: the operator on its control plane, Prometheus with the generated scrape
// configuration and alert rules, the Kafka cluster, the producer, the Kafka exporter, a search
// node, the Elasticsearch exporter, the pipeline's ingestion job and, as root, cAdvisor. It
// returns once every process serves its metrics (scraping takes a few more intervals).
func Start(t testing.TB, o Options) *Lab {
	t.Helper()
	// As root, cAdvisor serves the job's executors as their pods' containers (page cache, disk,
	// the executor signals); the brokers share the machine's interfaces here, so their network
	// series are StartOnLinks' to check.
	var cadvisor *CAdvisor
	var extra []*unstructured.Unstructured
	if why := cgroupsUnavailable(); why != "" {
		t.Log(why)
	} else {
		cadvisor = StartCAdvisor(t, t.TempDir())
		extra = append(extra, KubeletMonitor())
	}
	l := startControl(t, o, extra...)
	if cadvisor != nil {
		l.AddPod(t, cadvisor.Pod)
		l.CAdvisor = cadvisor
	}
	p := l.Pipeline
	kafka := desired.KafkaName(p)
	rulesText := kafkaRules(t, p)
	l.Kafka = StartKafka(t, l.dir, desired.BrokerPodPrefix(p), o.Brokers, rulesText)
	for _, b := range l.Kafka.Brokers {
		// The labels Strimzi 1.2.0 gives a node pool's pods (the PodMonitor selects on
		// strimzi.io/kind and copies every strimzi.io/* label), its container and metrics port.
		l.AddPod(t, Pod{Namespace: p.Namespace, Name: b.Pod, Container: "kafka", PortName: "tcp-prometheus",
			Address: fmt.Sprintf("127.0.0.1:%d", b.MetricsPort),
			Labels: map[string]string{
				"strimzi.io/kind": "Kafka", "strimzi.io/cluster": kafka, "strimzi.io/name": kafka + "-kafka",
				"strimzi.io/pool-name": desired.BrokerPoolName(p), "strimzi.io/broker-role": "true",
				"strimzi.io/component-type": "kafka",
			}})
	}
	pl := p.Status.Plan
	l.Producer = l.Kafka.Produce(t, l.dir, desired.TopicName(p), int(pl.Partitions), int(pl.ReplicationFactor),
		o.MessagesPerSecond*o.MessageBytes, int(o.MessageBytes))
	l.KafkaExporter = StartKafkaExporter(t, l.dir, p, l.Kafka)
	l.AddPod(t, l.KafkaExporter.Pod)
	l.Search = StartSearch(t, l.dir, p)
	l.ElasticsearchExporter = StartElasticsearchExporter(t, l.dir, p, l.Search)
	l.AddPod(t, l.ElasticsearchExporter.Pod)
	l.Job = StartIngestJob(t, l.dir, p, l.Kafka, l.Search, l.CAdvisor, l.driverKubeconfig(t))
	l.AddPod(t, l.Job.Pod)
	return l
}

// podTokenFile is where a pod's ServiceAccount token is mounted, which the chart's ServiceMonitor
// names as its bearerTokenFile.
const podTokenFile = "/var/run/secrets/kubernetes.io/serviceaccount/token"

// startControl starts what every lab has: the operator on its control plane with the lab's
// pipeline applied (planned, its autoscaler reading the lab's Prometheus), and Prometheus with
// the configuration and rules the Prometheus Operator generates from Strata's PodMonitors, the
// chart's ServiceMonitor and PrometheusRule, and extra monitors.
func startControl(t testing.TB, o Options, extra ...*unstructured.Unstructured) *Lab {
	t.Helper()
	p, err := Pipeline(o)
	if err != nil {
		t.Fatal(err)
	}
	l := &Lab{Pipeline: p, dir: t.TempDir()}

	upstream, err := os.ReadFile(filepath.Join(testutil.Root(), "config", "prometheus", "upstream-monitors.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	monitors, err := monitoringObjects(upstream, MonitorNamespace, "PodMonitor", "ServiceMonitor")
	if err != nil {
		t.Fatal(err)
	}
	chart := RenderChart(t, "strata", alerts.DefaultNamespace)
	l.Operator = StartOperator(t, l.dir, chart)
	l.OperatorMonitor = chart.Monitor
	secret, err := metricsCASecret(chart.Monitor, l.Operator.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	objects := []client.Object{secret}
	for _, obj := range append(append(monitors, chart.Objects...), extra...) {
		if obj.GetKind() == "PrometheusRule" {
			// Every alert's for: shortened, so that scenarios see alerts fire within a test.
			if err := shortenRuleFor(obj, o.alertFor()); err != nil {
				t.Fatal(err)
			}
		}
		objects = append(objects, obj)
	}
	l.Generated = GeneratePrometheusConfig(t, l.dir, l.Operator, o.ScrapeInterval, objects...)

	// What the Prometheus pod would mount: the tls-assets Secrets, the rulefiles ConfigMaps, its
	// ServiceAccount's token (the monitoring ServiceAccount's), and the config reloader's
	// environment for its first pod of shard 0.
	rw := Rewrite{
		Env:        map[string]string{"POD_NAME": prometheusPrefix + "-0", "SHARD": "0"},
		TargetsDir: l.dir, CertsDir: filepath.Join(l.dir, "certs"), RulesDir: filepath.Join(l.dir, "rules"),
		Files:    map[string]string{podTokenFile: l.Operator.TokenFile},
		Interval: o.ScrapeInterval,
	}
	if err := writeFiles(rw.CertsDir, l.Generated.TLSAssets); err != nil {
		t.Fatal(err)
	}
	for cm, files := range l.Generated.RuleFiles {
		if err := writeFiles(filepath.Join(rw.RulesDir, cm), files); err != nil {
			t.Fatal(err)
		}
	}
	config, discoveries, err := rw.Apply(l.Generated.Config)
	if err != nil {
		t.Fatal(err)
	}
	l.discoveries = discoveries
	for _, d := range discoveries {
		if err := writeTargets(d, nil); err != nil {
			t.Fatal(err)
		}
	}
	l.Prometheus = StartPrometheus(t, l.dir, config)

	// The operator plans the pipeline and its autoscaler reads the lab's Prometheus.
	p.Spec.Autoscaling.PrometheusURL = l.Prometheus.URL
	l.Operator.Apply(t, p)
	l.Operator.waitPlanned(t, p.Namespace, p.Name)
	op := chart.Pod
	op.Address = l.Operator.Address
	l.AddPod(t, op)
	return l
}

// metricsCASecret is the Secret the chart's ServiceMonitor takes its CA from (cert-manager writes
// it in a cluster, metrics-tls.yaml), holding the lab's metrics CA: the Prometheus Operator copies
// the key into the TLS assets.
func metricsCASecret(m Monitor, caFile string) (*corev1.Secret, error) {
	ep := m.Spec.Endpoints[0]
	if ep.TLSConfig == nil || ep.TLSConfig.CA.Secret == nil {
		return nil, fmt.Errorf("the chart's ServiceMonitor takes no CA from a Secret")
	}
	ca, err := os.ReadFile(caFile)
	if err != nil {
		return nil, err
	}
	ref := ep.TLSConfig.CA.Secret
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: m.Metadata.Namespace, Name: ref.Name},
		Data: map[string][]byte{ref.Key: ca}}, nil
}

// shortenRuleFor gives every alert of a PrometheusRule the `for:` d (ShortenFor).
func shortenRuleFor(rule *unstructured.Unstructured, d time.Duration) error {
	spec, _, _ := unstructured.NestedMap(rule.Object, "spec")
	b, err := yaml.Marshal(spec)
	if err != nil {
		return err
	}
	if b, err = ShortenFor(b, d); err != nil {
		return fmt.Errorf("PrometheusRule %s: %w", rule.GetName(), err)
	}
	spec = map[string]any{}
	if err := yaml.Unmarshal(b, &spec); err != nil {
		return err
	}
	return unstructured.SetNestedMap(rule.Object, spec, "spec")
}

// AddPod makes a process a target of every service discovery that would find it.
func (l *Lab) AddPod(t testing.TB, p Pod) {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.pods = append(l.pods, p)
	for _, d := range l.discoveries {
		if err := writeTargets(d, l.pods); err != nil {
			t.Fatal(err)
		}
	}
}

// kafkaRules is the JMX exporter configuration of the Kafka metrics ConfigMap Strata builds for p.
func kafkaRules(t testing.TB, p *v1alpha1.AnalyticsPipeline) string {
	t.Helper()
	cm := desired.KafkaMetricsConfigMap(desired.Inputs{Pipeline: p, Plan: *p.Status.Plan})
	switch data := cm.Object["data"].(type) {
	case map[string]string:
		return data[desired.KafkaMetricsConfigKey]
	case map[string]any:
		if s, ok := data[desired.KafkaMetricsConfigKey].(string); ok {
			return s
		}
	}
	t.Fatalf("the Kafka metrics ConfigMap has no %s", desired.KafkaMetricsConfigKey)
	return ""
}
