package lab

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/internal/autoscale"
	"github.com/strata-dev/strata/internal/desired"
)

// operatorEndpoint: the operator's metrics answer only over TLS with the certificate the
// ServiceMonitor verifies, and only to a caller the API server authenticates and authorizes.
// Prometheus scraping it (the target is up) is the other half: the TLS configuration and token
// generated from the chart's ServiceMonitor are accepted.
func operatorEndpoint(t *testing.T, l *Lab) {
	serverName := l.OperatorMonitor.Spec.Endpoints[0].ServerName()
	token, err := os.ReadFile(l.Operator.TokenFile)
	if err != nil {
		t.Fatal(err)
	}
	get := func(caFile, name string, token []byte) (int, error) {
		pool := x509.NewCertPool()
		if caFile != "" {
			pem, err := os.ReadFile(caFile)
			if err != nil {
				return 0, err
			}
			pool.AppendCertsFromPEM(pem)
		}
		c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
			TLSClientConfig: &tls.Config{RootCAs: pool, ServerName: name, MinVersion: tls.VersionTLS12}}}
		req, _ := http.NewRequest(http.MethodGet, "https://"+l.Operator.Address+"/metrics", nil)
		if token != nil {
			req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(token)))
		}
		resp, err := c.Do(req)
		if err != nil {
			return 0, err
		}
		resp.Body.Close()
		return resp.StatusCode, nil
	}
	if code, err := get(l.Operator.CAFile, serverName, token); err != nil || code != http.StatusOK {
		t.Errorf("with the CA, %s and the token: %d %v, want 200", serverName, code, err)
	}
	if code, err := get(l.Operator.CAFile, serverName, nil); err != nil || (code != http.StatusUnauthorized && code != http.StatusForbidden) {
		t.Errorf("without a token: %d %v, want 401 or 403", code, err)
	}
	// A token the API server cannot review: controller-runtime's filter answers 500 when the
	// TokenReview reports an error (pkg/metrics/filters/filters.go), refusing all the same.
	if code, err := get(l.Operator.CAFile, serverName, []byte("not-a-token")); err != nil || code == http.StatusOK {
		t.Errorf("with a token the API server does not know: %d %v, want a refusal", code, err)
	}
	// A real ServiceAccount without the metrics-reader binding is authenticated, not authorized.
	if code, err := get(l.Operator.CAFile, serverName, l.Operator.unboundToken(t)); err != nil || code != http.StatusForbidden {
		t.Errorf("with a ServiceAccount not bound to the metrics reader: %d %v, want 403", code, err)
	}
	other, err := WriteServingCert(filepath.Join(t.TempDir(), "other"), serverName)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := get(other, serverName, token); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("with another CA: %v, want a certificate error", err)
	}
	if _, err := get(l.Operator.CAFile, "strata-metrics.elsewhere.svc", token); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("for another server name: %v, want a certificate error", err)
	}
}

// planInvalid: a pipeline naming a StorageTier that does not exist is not planned
// (PlanValid=False, TierNotFound) and StrataPipelinePlanInvalid fires for it.
func planInvalid(t *testing.T, ctx context.Context, l *Lab) {
	bad := l.Pipeline.DeepCopy()
	bad.Name = "lab-invalid"
	bad.Spec.Kafka.Storage.Tier = "no-such-tier"
	bad.Spec.Autoscaling.Enabled = false
	l.Operator.Apply(t, bad)
	created := time.Now()
	var got v1alpha1.AnalyticsPipeline
	deadline := time.Now().Add(time.Minute)
	for {
		if err := l.Operator.Client.Get(ctx, client.ObjectKeyFromObject(bad), &got); err != nil {
			t.Fatal(err)
		}
		if c := meta.FindStatusCondition(got.Status.Conditions, v1alpha1.ConditionPlanValid); c != nil && c.Status == "False" {
			if c.Reason != v1alpha1.ReasonTierNotFound {
				t.Errorf("PlanValid=False for %s, want %s", c.Reason, v1alpha1.ReasonTierNotFound)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no PlanValid=False a minute after creating %s: %+v", bad.Name, got.Status.Conditions)
		}
		time.Sleep(time.Second)
	}
	r, ok := l.WaitAlert(ctx, "StrataPipelinePlanInvalid", "firing", 2*time.Minute)
	if !ok {
		t.Fatalf("StrataPipelinePlanInvalid not firing: %v", r)
	}
	for _, s := range r.Series {
		if s.Labels["pipeline"] != bad.Name || s.Labels["namespace"] != bad.Namespace {
			t.Errorf("StrataPipelinePlanInvalid fires for %v, want only %s/%s", s.Labels, bad.Namespace, bad.Name)
		}
	}
	t.Logf("StrataPipelinePlanInvalid firing %s after the pipeline was created", time.Since(created).Round(time.Second))
}

// autoscalerReads: the real autoscaler reads the lab's Prometheus with its default queries: its
// Brokers window records a reading with fresh samples, and the Autoscaling condition names no
// signal whose source runs in the lab as missing (it lists the signals it had no fresh sample
// of: cAdvisor's executor signals and Spark's spill may be among them).
func autoscalerReads(t *testing.T, ctx context.Context, l *Lab) {
	var got v1alpha1.AnalyticsPipeline
	var c *metav1.Condition
	deadline := time.Now().Add(2 * time.Minute)
	for {
		if err := l.Operator.Client.Get(ctx, client.ObjectKeyFromObject(l.Pipeline), &got); err != nil {
			t.Fatal(err)
		}
		c = meta.FindStatusCondition(got.Status.Conditions, v1alpha1.ConditionAutoscaling)
		if c != nil && brokersRead(got.Status.Autoscaling) && len(missing(c.Message, labSignals)) == 0 {
			break
		}
		if time.Now().After(deadline) {
			var stale []autoscale.Signal
			if c != nil {
				stale = missing(c.Message, labSignals)
			}
			t.Fatalf("no autoscaler reading of every lab signal within two minutes (Brokers window read: %t; lab signals it names as missing: %v): %v",
				brokersRead(got.Status.Autoscaling), stale, conditionSummary(got.Status.Conditions))
		}
		time.Sleep(time.Second)
	}
	t.Logf("Autoscaling=%s %s: %s", c.Status, c.Reason, c.Message)
}

// labSignals are the autoscaler's signals whose sources run in the lab (the broker network ones
// through their fallback to Kafka's own byte counters).
var labSignals = []autoscale.Signal{autoscale.BrokerTransmitBytes, autoscale.BrokerReceiveBytes,
	autoscale.KafkaBytesIn, autoscale.KafkaBytesOut, autoscale.UnderReplicatedPartitions,
	autoscale.IngestRate, autoscale.ProcessingRate, autoscale.ConsumerLag, autoscale.ConsumerLagTrend,
	autoscale.ElasticsearchIndexingRate}

// missing are the signals of want a condition message names.
func missing(message string, want []autoscale.Signal) []autoscale.Signal {
	var out []autoscale.Signal
	for _, s := range want {
		if strings.Contains(message, string(s)) {
			out = append(out, s)
		}
	}
	return out
}

// brokersRead says whether the autoscaler's Brokers window has a reading with fresh samples.
func brokersRead(st *v1alpha1.AutoscalingStatus) bool {
	if st == nil {
		return false
	}
	for _, w := range st.Windows {
		if w.Resource == v1alpha1.ResourceBrokers && w.LastReading != nil {
			return true
		}
	}
	return false
}

// reconcileErrors: the operator runs with the chart's RBAC (a healthy lab has no reconcile
// errors, so that RBAC is enough for what the lab reconciles); once the chart's manager
// ClusterRole loses its write verbs on Strimzi's kinds and the pipeline's Kafka is deleted, every
// reconcile fails to recreate it and StrataOperatorReconcileErrors fires.
func reconcileErrors(t *testing.T, ctx context.Context, l *Lab) {
	c := l.Operator.Client
	var role rbacv1.ClusterRole
	for _, u := range l.Operator.chart.RBAC {
		if u.GetKind() == "ClusterRole" && strings.HasSuffix(u.GetName(), "-manager") {
			if err := c.Get(ctx, client.ObjectKey{Name: u.GetName()}, &role); err != nil {
				t.Fatal(err)
			}
		}
	}
	if role.Name == "" {
		t.Fatal("the chart has no manager ClusterRole")
	}
	cut := 0
	for i, r := range role.Rules {
		if !slices.Contains(r.APIGroups, "kafka.strimzi.io") || !slices.Contains(r.Resources, "kafkas") {
			continue
		}
		role.Rules[i].Verbs = slices.DeleteFunc(r.Verbs, func(v string) bool { return v != "get" && v != "list" && v != "watch" })
		cut++
	}
	if cut == 0 {
		t.Fatalf("ClusterRole %s grants nothing on kafka.strimzi.io kafkas", role.Name)
	}
	if err := c.Update(ctx, &role); err != nil {
		t.Fatal(err)
	}
	kafka := &unstructured.Unstructured{}
	kafka.SetGroupVersionKind(schema.GroupVersionKind{Group: "kafka.strimzi.io", Version: "v1", Kind: "Kafka"})
	kafka.SetNamespace(l.Pipeline.Namespace)
	kafka.SetName(desired.KafkaName(l.Pipeline))
	if err := c.Delete(ctx, kafka); err != nil {
		t.Fatalf("deleting the pipeline's Kafka: %v", err)
	}
	cut0 := time.Now()
	r, ok := l.WaitAlert(ctx, "StrataOperatorReconcileErrors", "firing", 2*time.Minute)
	if !ok {
		t.Fatalf("StrataOperatorReconcileErrors not firing: %v", r)
	}
	t.Logf("StrataOperatorReconcileErrors firing for %v %s after the Kafka was deleted", r.Series[0].Labels["controller"], time.Since(cut0).Round(time.Second))
}

// overloaded: a pipeline whose workload no broker count up to its maximum carries is planned at
// its bounds with a bottleneck (PlanValid=False, CapacityExceeded); with autoscaling on and the
// bottleneck's resource at its maximum, StrataPipelineBottleneck and StrataAutoscalerAtMaximum
// fire for it.
func overloaded(t *testing.T, ctx context.Context, l *Lab) {
	big := l.Pipeline.DeepCopy()
	big.Name = "lab-overloaded"
	big.Spec.Workload.MessagesPerSecond *= 1000
	big.Spec.Workload.ConsumerMessagesPerSecond *= 1000
	l.Operator.Apply(t, big)
	got := l.Operator.waitPlanned(t, big.Namespace, big.Name)
	if c := meta.FindStatusCondition(got.Status.Conditions, v1alpha1.ConditionPlanValid); c == nil || c.Reason != v1alpha1.ReasonCapacityExceeded {
		t.Fatalf("PlanValid of %s: %+v, want CapacityExceeded", big.Name, c)
	}
	t.Logf("%s: bottleneck %s, %d brokers, %d executors, %d data nodes", big.Name, got.Status.Plan.Bottleneck,
		got.Status.Plan.Brokers, got.Status.Plan.Executors, got.Status.Plan.ElasticsearchDataNodes)
	created := time.Now()
	for _, alert := range []string{"StrataPipelineBottleneck", "StrataAutoscalerAtMaximum"} {
		r, ok := l.WaitAlert(ctx, alert, "firing", 2*time.Minute)
		if !ok {
			t.Errorf("%s not firing: %v", alert, r)
			continue
		}
		for _, s := range r.Series {
			if s.Labels["pipeline"] != big.Name {
				t.Errorf("%s fires for %v, want only %s", alert, s.Labels, big.Name)
			}
		}
		t.Logf("%s firing %s after the pipeline was created", alert, time.Since(created).Round(time.Second))
	}
}
