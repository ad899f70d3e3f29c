package metrics

import (
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/internal/testutil/gen"
)

// pipeline is the API example, autoscaled and planned as the operator would have.
func pipeline(ns, name string) *v1alpha1.AnalyticsPipeline {
	p := gen.Pipeline(gen.SetName(ns, name), gen.SetAutoscaling(v1alpha1.AutoscalingSpec{Enabled: true}), gen.SetConditions(
		metav1.Condition{Type: v1alpha1.ConditionPlanValid, Status: metav1.ConditionTrue, Reason: v1alpha1.ReasonPlanned},
		metav1.Condition{Type: v1alpha1.ConditionReady, Status: metav1.ConditionFalse, Reason: v1alpha1.ReasonProgressing},
	))
	p.Status.Plan = &v1alpha1.Plan{
		Brokers: 3, Executors: 4, ElasticsearchDataNodes: 2,
		LinkUsableBytesPerSecond: 112500000, LinkPlannedBytesPerSecond: 90000000,
		BrokerReceiveBytesPerSecond: 60186666, BrokerSendBytesPerSecond: 60186666, BrokerDiskWriteBytesPerSecond: 60186666,
		Stages: []v1alpha1.StageCapacity{
			{Name: v1alpha1.StageKafkaBrokerNetwork, MaxMessagesPerSecond: 18691},
			{Name: v1alpha1.StageSparkProcessing, MaxMessagesPerSecond: 16000},
		},
		MaxMessagesPerSecond: 16000,
		Bottleneck:           v1alpha1.BottleneckNone,
		ExecutorMemory: v1alpha1.ExecutorMemory{
			Heap: resource.MustParse("5585Mi"), OffHeap: resource.MustParse("5585Mi"),
			Overhead: resource.MustParse("1118Mi"), PageCache: resource.MustParse("4Gi"), Pod: resource.MustParse("16Gi"),
		},
		Storage: []v1alpha1.StoragePlacement{
			{Role: v1alpha1.RoleKafkaLog, Tier: "nvme-local", StorageClassName: "strata-nvme-local",
				SizePerReplica: resource.MustParse("200Gi"), Replicas: 3, MonthlyCost: "129.60"},
			{Role: v1alpha1.RoleSparkShuffleData, Tier: "hdd-st1", StorageClassName: "st1",
				SizePerReplica: resource.MustParse("40Gi"), Replicas: 4, MonthlyCost: "8.64"},
		},
		MonthlyStorageCost: "138.24", SingleTierMonthlyStorageCost: "163.44",
	}
	return p
}

// series returns "name{labels} value" for every series of the registry, sorted.
func series(t *testing.T, reg *prometheus.Registry) []string {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			out = append(out, format(mf.GetName(), m))
		}
	}
	sort.Strings(out)
	return out
}

func format(name string, m *dto.Metric) string {
	var ls []string
	for _, l := range m.GetLabel() {
		ls = append(ls, l.GetName()+"="+l.GetValue())
	}
	v := m.GetGauge().GetValue()
	if m.GetCounter() != nil {
		v = m.GetCounter().GetValue()
	}
	return name + "{" + strings.Join(ls, ",") + "} " + strconv.FormatFloat(v, 'f', -1, 64)
}

// has reports whether all holds want, whose labels may be in any order.
func has(all []string, want string) bool {
	want = sortLabels(want)
	for _, s := range all {
		if s == want {
			return true
		}
	}
	return false
}

func TestObserveSetsThePlan(t *testing.T) {
	reg := prometheus.NewRegistry()
	r := New(reg)
	r.Observe(pipeline("default", "sensors"))
	got := series(t, reg)
	for _, want := range []string{
		"strata_pipeline_info{namespace=default,pipeline=sensors,topic=sensors,kafka_cluster=sensors," +
			"broker_podset=sensors-sensors-broker,spark_application=sensors,elasticsearch_cluster=sensors} 1",
		"strata_pipeline_workload_messages_per_second{namespace=default,pipeline=sensors} 10000",
		"strata_pipeline_workload_bytes_per_second{namespace=default,pipeline=sensors} 90280000",
		"strata_pipeline_stage_capacity_messages_per_second{namespace=default,pipeline=sensors,stage=SparkProcessing} 16000",
		"strata_pipeline_bottleneck_info{namespace=default,pipeline=sensors,stage=None} 1",
		"strata_pipeline_target_utilization_ratio{namespace=default,pipeline=sensors} 0.8",
		"strata_pipeline_replicas{namespace=default,pipeline=sensors,resource=Brokers} 3",
		"strata_pipeline_replicas_max{namespace=default,pipeline=sensors,resource=Executors} 10",
		"strata_pipeline_executor_memory_bytes{namespace=default,pipeline=sensors,part=pageCache} 4294967296",
		"strata_pipeline_storage_bytes{namespace=default,pipeline=sensors,role=KafkaLog,tier=nvme-local,storageclass=strata-nvme-local} 644245094400",
		"strata_pipeline_storage_monthly_cost{namespace=default,pipeline=sensors,role=SparkShuffleData,tier=hdd-st1,storageclass=st1} 8.64",
		"strata_pipeline_condition{namespace=default,pipeline=sensors,type=PlanValid,reason=Planned} 1",
		"strata_pipeline_condition{namespace=default,pipeline=sensors,type=Ready,reason=Progressing} 0",
		"strata_pipeline_autoscaling_enabled{namespace=default,pipeline=sensors} 1",
	} {
		if !has(got, want) {
			t.Errorf("missing %s\nhave:\n%s", want, strings.Join(got, "\n"))
		}
	}
}

func TestObserveDropsWhatThePlanNoLongerSays(t *testing.T) {
	reg := prometheus.NewRegistry()
	r := New(reg)
	p := pipeline("default", "sensors")
	r.Observe(p)
	p.Status.Plan.Bottleneck = v1alpha1.StageSparkProcessing
	p.Status.Plan.Storage = p.Status.Plan.Storage[:1]
	p.Status.Conditions[1].Reason = v1alpha1.ReasonAvailable
	p.Status.Conditions[1].Status = metav1.ConditionTrue
	r.Observe(p)
	got := series(t, reg)
	for _, gone := range []string{"stage=None", "role=SparkShuffleData", "reason=Progressing"} {
		for _, s := range got {
			if strings.Contains(s, gone) {
				t.Errorf("stale series %s", s)
			}
		}
	}
	if !has(got, "strata_pipeline_bottleneck_info{namespace=default,pipeline=sensors,stage=SparkProcessing} 1") {
		t.Errorf("new bottleneck missing:\n%s", strings.Join(got, "\n"))
	}

	// A spec that no longer plans keeps the pipeline's info and conditions, not its plan.
	p.Status.Plan = nil
	r.Observe(p)
	for _, s := range series(t, reg) {
		if strings.HasPrefix(s, StageCapacity) || strings.HasPrefix(s, StorageBytes) || strings.HasPrefix(s, Bottleneck) {
			t.Errorf("plan series without a plan: %s", s)
		}
	}
}

func TestForgetRemovesEverySeriesOfThePipeline(t *testing.T) {
	reg := prometheus.NewRegistry()
	r := New(reg)
	other := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "strata_test_total", Help: "h"},
		[]string{"namespace", "pipeline", "action"})
	reg.MustRegister(other)
	r.ForgetAlso(other)
	r.Observe(pipeline("default", "sensors"))
	r.Observe(pipeline("default", "logs"))
	if err := r.SetObserved(BrokerLinkUtilization, "default", "sensors", 0.93); err != nil {
		t.Fatal(err)
	}
	if err := r.SetObserved(ExecutorPageCacheRatio, "default", "sensors", 0.4); err != nil {
		t.Fatal(err)
	}
	if err := r.SetObserved(Replicas, "default", "sensors", 1); err == nil {
		t.Error("SetObserved accepted a metric Observe sets")
	}
	other.WithLabelValues("default", "sensors", "ScaleUp").Inc()
	r.Forget("default", "sensors")
	got := series(t, reg)
	if len(got) == 0 {
		t.Fatal("the other pipeline's series went too")
	}
	for _, s := range got {
		if strings.Contains(s, "pipeline=sensors") {
			t.Errorf("series of a forgotten pipeline: %s", s)
		}
	}
}

func sortLabels(s string) string {
	open, end := strings.Index(s, "{"), strings.Index(s, "}")
	ls := strings.Split(s[open+1:end], ",")
	sort.Strings(ls)
	return s[:open+1] + strings.Join(ls, ",") + s[end:]
}

// TestLabelsAreBounded: no metric carries a per-pod label.
func TestLabelsAreBounded(t *testing.T) {
	for _, d := range Descriptions() {
		if d.Labels[0] != "namespace" || d.Labels[1] != "pipeline" {
			t.Errorf("%s: labels %v do not start with namespace, pipeline", d.Name, d.Labels)
		}
		for _, l := range d.Labels {
			if l == "pod" || l == "instance" || l == "executor_id" || l == "broker" {
				t.Errorf("%s has a per-pod label %q", d.Name, l)
			}
		}
		if !strings.HasPrefix(d.Name, "strata_") || strings.HasSuffix(d.Name, "_total") {
			t.Errorf("%s: gauges are strata_-prefixed and do not end in _total", d.Name)
		}
	}
}

// TestForgetAlso: a recorder's Forget removes a deleted pipeline's series from another
// package's vector it was given (the manager gives it the autoscaler's decisions counter), and
// only that pipeline's.
func TestForgetAlso(t *testing.T) {
	reg := prometheus.NewRegistry()
	r := New(reg)
	decisions := prometheus.NewCounterVec(prometheus.CounterOpts{Name: AutoscalerDecisions, Help: "test"},
		[]string{"namespace", "pipeline", "resource", "action", "reason"})
	reg.MustRegister(decisions)
	r.ForgetAlso(decisions)
	decisions.WithLabelValues("gone", "sensors", "Brokers", "ScaleUp", "LinkSaturated").Inc()
	decisions.WithLabelValues("kept", "sensors", "Brokers", "ScaleUp", "LinkSaturated").Inc()
	r.Forget("gone", "sensors")
	if got := series(t, reg); len(got) != 1 || !strings.Contains(got[0], "namespace=kept") {
		t.Errorf("decision series left: %v, want the other pipeline's", got)
	}
}

// TestPublishGroupsSamplesByFamily publishes one pipeline's samples with the families
// interleaved and a series set twice: each family's collector must emit exactly its own
// series, each once, with the last value set.
func TestPublishGroupsSamplesByFamily(t *testing.T) {
	reg := prometheus.NewRegistry()
	r := New(reg)
	r.publish(pipelineKey{"ns", "p"}, []sample{
		{family: ReplicasMin, labels: []string{ResourceBrokers}, value: 1},
		{family: WorkloadMessages, value: 10},
		{family: ReplicasMin, labels: []string{ResourceExecutors}, value: 2},
		{family: Condition, labels: []string{"Ready", "Progressing"}, value: 0},
		{family: ReplicasMin, labels: []string{ResourceBrokers}, value: 3},
		{family: "strata_not_a_family", value: 9},
	})
	got := series(t, reg)
	want := []string{
		sortLabels(Condition + "{namespace=ns,pipeline=p,type=Ready,reason=Progressing} 0"),
		sortLabels(ReplicasMin + "{namespace=ns,pipeline=p,resource=" + ResourceBrokers + "} 3"),
		sortLabels(ReplicasMin + "{namespace=ns,pipeline=p,resource=" + ResourceExecutors + "} 2"),
		sortLabels(WorkloadMessages + "{namespace=ns,pipeline=p} 10"),
	}
	sort.Strings(want)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("series:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// BenchmarkGather is one scrape of 1,000 pipelines' series (docs/performance.md).
func BenchmarkGather(b *testing.B) {
	reg := prometheus.NewRegistry()
	r := New(reg)
	for i := range 1000 {
		r.Observe(pipeline("ns", "p"+strconv.Itoa(i)))
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := reg.Gather(); err != nil {
			b.Fatal(err)
		}
	}
}
