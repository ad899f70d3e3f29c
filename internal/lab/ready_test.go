package lab

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/internal/alerts"
	"github.com/strata-dev/strata/internal/desired"
)

// metricsUnavailable makes the lab's pipeline Ready the way a cluster's operators would: each
// child's status as its operator writes it (Strimzi's Ready condition on the Kafka, the topic and
// the job's user; the Spark operator's RUNNING; ECK's phase Ready with green health, each for the
// generation the object has). StrataPipelineMetricsUnavailable then fires for the pipeline naming
// exactly the sources the lab does not scrape here (the brokers' network; the executors' container
// series too without root), and none of those it runs (the Kafka exporter, Spark's executor
// metrics, the Elasticsearch exporter, and as root cAdvisor's executor pods): each source's
// series are found for the pipeline through the same keys the alert uses.
func metricsUnavailable(t *testing.T, ctx context.Context, l *Lab) {
	p := l.Pipeline
	strimziReady := map[string]any{"conditions": []any{map[string]any{
		"type": "Ready", "status": "True", "lastTransitionTime": time.Now().UTC().Format(time.RFC3339)}}}
	for _, child := range []struct {
		gvk    schema.GroupVersionKind
		name   string
		status map[string]any
	}{
		{desired.KafkaGVK, desired.KafkaName(p), strimziReady},
		{desired.KafkaTopicGVK, desired.KafkaTopicName(p), strimziReady},
		{desired.KafkaUserGVK, desired.KafkaUserName(p), strimziReady},
		// driverInfo is required by the CRD (kubeflow/spark-operator v2.5.2,
		// api/v1beta2/sparkapplication_types.go SparkApplicationStatus); the operator fills it
		// from the driver pod it watches.
		{desired.SparkApplicationGVK, desired.SparkApplicationName(p), map[string]any{
			"applicationState": map[string]any{"state": "RUNNING"},
			"driverInfo":       map[string]any{"podName": l.Job.Pod.Name},
		}},
		{desired.ElasticsearchGVK, desired.ElasticsearchName(p), map[string]any{"phase": "Ready", "health": "green"}},
	} {
		if err := setStatus(ctx, l.Operator.Client, child.gvk, p.Namespace, child.name, child.status); err != nil {
			t.Fatal(err)
		}
	}
	ready := fmt.Sprintf(`strata_pipeline_condition{type="Ready", namespace=%q, pipeline=%q} == 1`, p.Namespace, p.Name)
	if r, ok := l.Prometheus.WaitFor(ctx, ready, 2*time.Minute, func(r Result) bool { return len(r.Series) == 1 }); !ok {
		var got v1alpha1.AnalyticsPipeline
		_ = l.Operator.Client.Get(ctx, client.ObjectKeyFromObject(p), &got)
		t.Fatalf("%s: %v; the pipeline's conditions: %v", ready, r, conditionSummary(got.Status.Conditions))
	}
	began := time.Now()
	const alert = "StrataPipelineMetricsUnavailable"
	missing := []string{}
	for _, s := range alerts.Sources() {
		if !l.runsAlertSource(s.Name) {
			missing = append(missing, s.Name)
		}
	}
	q := fmt.Sprintf(`ALERTS{alertname=%q, alertstate="firing", namespace=%q, pipeline=%q}`, alert, p.Namespace, p.Name)
	r, ok := l.Prometheus.WaitFor(ctx, q, 2*time.Minute, func(r Result) bool { return len(r.Series) >= len(missing) })
	if !ok {
		t.Fatalf("%s: %v, want it firing for %v", q, r, missing)
	}
	var got []string
	for _, s := range r.Series {
		got = append(got, s.Labels["source"])
	}
	sort.Strings(got)
	sort.Strings(missing)
	if !slices.Equal(got, missing) {
		t.Errorf("%s fires for the sources %v, want exactly those the lab does not scrape: %v", alert, got, missing)
	}
	t.Logf("%s firing %s after the pipeline became Ready, for %v", alert, time.Since(began).Round(time.Second), got)
}

// runsAlertSource says whether TestLab runs an alert source (alerts.Sources' names): not the
// brokers' network series (StartOnLinks serves those), and the executors' container series only
// as root, when cAdvisor serves the job's executors.
func (l *Lab) runsAlertSource(name string) bool {
	switch name {
	case "broker network (cAdvisor)":
		return false
	case "executor (cAdvisor)":
		return l.CAdvisor != nil
	}
	return true
}

// setStatus writes status on the named object through its status subresource, with
// observedGeneration (which Strimzi and ECK report) at the object's generation.
func setStatus(ctx context.Context, c client.Client, gvk schema.GroupVersionKind, namespace, name string, status map[string]any) error {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	if err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, u); err != nil {
		return fmt.Errorf("%s %s: %w", gvk.Kind, name, err)
	}
	st := map[string]any{}
	for k, v := range status {
		st[k] = v
	}
	if gvk != desired.SparkApplicationGVK {
		st["observedGeneration"] = u.GetGeneration()
	}
	u.Object["status"] = st
	if err := c.Status().Update(ctx, u); err != nil {
		return fmt.Errorf("%s %s status: %w", gvk.Kind, name, err)
	}
	return nil
}

func conditionSummary(conds []metav1.Condition) []string {
	out := make([]string, 0, len(conds))
	for _, c := range conds {
		out = append(out, fmt.Sprintf("%s=%s %s: %s", c.Type, c.Status, c.Reason, c.Message))
	}
	return out
}
