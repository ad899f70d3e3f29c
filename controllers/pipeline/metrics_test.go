package pipeline_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/controllers/internal/envtestutil"
	pipelinemetrics "github.com/strata-dev/strata/internal/metrics"
	"github.com/strata-dev/strata/internal/testutil"
)

// pipelineRegistry serves the controllers' pipeline metrics (pipelinemetrics.Default) to this
// package's tests: nothing registers them at package load, cmd/manager does in the operator.
var pipelineRegistry = func() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	if err := pipelinemetrics.Default.Register(reg); err != nil {
		panic(err)
	}
	return reg
}()

// pipelineSeries returns the operator's series of one pipeline, "name{stage}" style: the metric
// name and, where it has one, its stage, resource or role label.
func pipelineSeries(t *testing.T, ns, name string) map[string]float64 {
	t.Helper()
	mfs, err := pipelineRegistry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["namespace"] != ns || labels["pipeline"] != name {
				continue
			}
			key := mf.GetName()
			for _, l := range []string{"stage", "resource", "role"} {
				if v, ok := labels[l]; ok {
					key += "{" + v + "}"
				}
			}
			out[key] = m.GetGauge().GetValue() + m.GetCounter().GetValue()
		}
	}
	return out
}

// TestPipelineMetrics: a planned pipeline's figures are on the pipeline metrics' registry, and
// they go when the pipeline is deleted.
func TestPipelineMetrics(t *testing.T) {
	o := envtestutil.StartOperator(t)
	ns, _ := o.CreateSamples(t)
	p := &v1alpha1.AnalyticsPipeline{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "sensors"}}
	envtestutil.WaitPlanned(t, o.C, p, func() error { return nil })

	var got map[string]float64
	_ = testutil.Wait(time.Minute, func() error { // the table below says what is missing
		got = pipelineSeries(t, ns, "sensors")
		if got["strata_pipeline_replicas{Brokers}"] != float64(p.Status.Plan.Brokers) {
			return fmt.Errorf("no broker replicas yet")
		}
		return nil
	})
	for key, want := range map[string]float64{
		"strata_pipeline_info":                                                        1,
		"strata_pipeline_workload_messages_per_second":                                float64(p.Spec.Workload.MessagesPerSecond),
		"strata_pipeline_bottleneck_info{" + p.Status.Plan.Bottleneck + "}":           1,
		"strata_pipeline_replicas{Brokers}":                                           float64(p.Status.Plan.Brokers),
		"strata_pipeline_replicas{Executors}":                                         float64(p.Status.Plan.Executors),
		"strata_pipeline_stage_capacity_messages_per_second{SparkProcessing}":         16000,
		"strata_pipeline_max_messages_per_second":                                     float64(p.Status.Plan.MaxMessagesPerSecond),
		"strata_pipeline_storage_monthly_cost{" + v1alpha1.RoleSparkShuffleData + "}": 199.8, // 925Gi of st1: what sustains an executor's writes
	} {
		if v, ok := got[key]; !ok || v != want {
			t.Errorf("%s = %v (present %v), want %v; have %v", key, v, ok, want, got)
		}
	}

	if err := o.C.Delete(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, time.Minute, "the deleted pipeline's series to go", func() error {
		if left := pipelineSeries(t, ns, "sensors"); len(left) > 0 {
			return fmt.Errorf("series remain: %v", left)
		}
		return nil
	})
}
