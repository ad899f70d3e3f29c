package controllers

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/internal/autoscale"
	autoscaleprom "github.com/strata-dev/strata/internal/autoscale/prometheus"
	"github.com/strata-dev/strata/internal/desired"
	pipelinemetrics "github.com/strata-dev/strata/internal/metrics"
	planpkg "github.com/strata-dev/strata/internal/plan"
)

// Autoscaler is the reconciler's link to the pipelines' metrics. The zero value reads
// Prometheus at spec.autoscaling.prometheusURL with the wall clock.
type Autoscaler struct {
	// Source returns the metrics source of a pipeline; nil: Prometheus at its prometheusURL.
	Source func(p *v1alpha1.AnalyticsPipeline) (autoscale.MetricsSource, error)
	// Now is the clock; nil: time.Now.
	Now func() time.Time
	// Access is how Prometheus may be reached: allowed URLs, credentials, timeouts.
	Access autoscaleprom.Access

	mu      sync.Mutex
	sources map[string]autoscale.MetricsSource
}

// lastReading is when a status was last read from Prometheus with fresh samples.
func lastReading(st *v1alpha1.AutoscalingStatus) time.Time {
	var t time.Time
	if st == nil {
		return t
	}
	for _, w := range st.Windows {
		if w.LastReading != nil && w.LastReading.After(t) {
			t = w.LastReading.Time
		}
	}
	if d := st.LastDecision; d != nil && d.Time.After(t) {
		t = d.Time.Time
	}
	return t
}

func (a *Autoscaler) now() time.Time {
	if a.Now != nil {
		return a.Now()
	}
	return time.Now()
}

// source returns the pipeline's metrics source; Prometheus clients are shared per URL and
// interval (the interval sets how old a sample may be).
func (a *Autoscaler) source(p *v1alpha1.AnalyticsPipeline) (autoscale.MetricsSource, error) {
	if a.Source != nil {
		return a.Source(p)
	}
	interval := autoscale.Interval(p.Spec.Autoscaling)
	key := fmt.Sprintf("%s|%s", p.Spec.Autoscaling.PrometheusURL, interval)
	a.mu.Lock()
	defer a.mu.Unlock()
	if s, ok := a.sources[key]; ok {
		return s, nil
	}
	s, err := autoscaleprom.NewPrometheus(p.Spec.Autoscaling.PrometheusURL, 2*interval, a.Access)
	if err != nil {
		return nil, err
	}
	if a.sources == nil {
		a.sources = map[string]autoscale.MetricsSource{}
	}
	a.sources[key] = s
	return s, nil
}

// autoscale returns the autoscaler's targets to plan with (plan.Observed.Autoscaling; nil: the
// spec as it is), as the autoscaling controller (AutoscalingReconciler) wrote them to
// status.autoscaling. With autoscaling off it removes the autoscaler's status and condition:
// the spec says so, and the autoscaling controller writes nothing for such a pipeline.
func (r *PipelineReconciler) autoscale(p *v1alpha1.AnalyticsPipeline, conds conditions) *v1alpha1.AutoscalingStatus {
	if spec := p.Spec.Autoscaling; spec == nil || !spec.Enabled {
		p.Status.Autoscaling = nil
		removeCondition(conds, v1alpha1.ConditionAutoscaling)
		return nil
	}
	return p.Status.Autoscaling
}

// policy is what Recommend decides with (autoscale.NewPolicy), with what Strimzi and the Spark
// operator report now.
func policy(p *v1alpha1.AnalyticsPipeline, base v1alpha1.Plan, obs observed, safety autoscale.BrokerSafety) autoscale.Policy {
	app := obs.get(desired.SparkApplicationGVK, p.Namespace, desired.SparkApplicationName(p))
	return autoscale.NewPolicy(p, base, safety, sparkStatus(app).status == metav1.ConditionTrue)
}

// brokerSafety is whether brokers may leave now, as Strimzi reports it on the Kafka, the broker
// pool and the cluster's KafkaRebalances; when the KafkaRebalances cannot be listed, that is
// unknown, and unknown holds a scale-down back.
func (r *PipelineReconciler) brokerSafety(ctx context.Context, p *v1alpha1.AnalyticsPipeline, obs observed,
	served []schema.GroupVersionKind) autoscale.BrokerSafety {
	rebalances, err := r.rebalances(ctx, p, served)
	if err != nil {
		log.FromContext(ctx).Error(err, "listing KafkaRebalances; broker scale-downs wait")
		return autoscale.SafetyUnknown("listing the cluster's KafkaRebalances failed: " + err.Error())
	}
	return autoscale.StrimziSafety(obs.get(desired.KafkaGVK, p.Namespace, desired.KafkaName(p)),
		obs.get(desired.KafkaNodePoolGVK, p.Namespace, desired.BrokerPoolName(p)), rebalances)
}

// currentState is what runs now: the applied plan's counts, and the split and rate it used.
func currentState(p *v1alpha1.AnalyticsPipeline) autoscale.State {
	return autoscale.NewState(p, *p.Status.Plan, p.Status.Autoscaling)
}

// rebalances lists the KafkaRebalances of the pipeline's Kafka cluster, the ones Strimzi's
// auto-rebalance creates included (they carry the strimzi.io/cluster label, not ours); none when
// the API server serves no KafkaRebalance.
func (r *PipelineReconciler) rebalances(ctx context.Context, p *v1alpha1.AnalyticsPipeline,
	served []schema.GroupVersionKind) ([]*unstructured.Unstructured, error) {
	if !slices.Contains(served, desired.KafkaRebalanceGVK) {
		return nil, nil
	}
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(desired.KafkaRebalanceGVK.GroupVersion().WithKind("KafkaRebalanceList"))
	if err := r.Client.List(ctx, list, client.InNamespace(p.Namespace),
		client.MatchingLabels{desired.StrimziClusterLabel: desired.KafkaName(p)}); err != nil {
		return nil, err
	}
	out := make([]*unstructured.Unstructured, len(list.Items))
	for i := range list.Items {
		out[i] = &list.Items[i]
	}
	return out, nil
}

// announceDecisions records an event for each decision and counts it.
func (r *PipelineReconciler) announceDecisions(ctx context.Context, p *v1alpha1.AnalyticsPipeline, d autoscale.Decision) {
	for _, c := range d.Changes {
		autoscaleprom.Count(p.Namespace, p.Name, c)
		log.FromContext(ctx).Info("autoscaler decision", "resource", c.Resource, "action", c.Action,
			"from", c.From, "to", c.To, "reason", c.Reason, "message", c.Message)
		if r.Recorder == nil {
			continue
		}
		kind := corev1.EventTypeNormal
		if c.Action == v1alpha1.ActionBlocked {
			kind = corev1.EventTypeWarning
		}
		r.Recorder.Eventf(p, nil, kind, c.Reason, "Autoscale", "%s %s %d -> %d: %s", c.Resource, c.Action, c.From, c.To, c.Message)
	}
}

// observeUtilization publishes what the autoscaler saw for the dashboards: the brokers' link
// use (the busier direction of the busiest broker: the one the autoscaler sizes) and the executors' page cache over
// their reserve.
func observeUtilization(p *v1alpha1.AnalyticsPipeline, read autoscale.Observations, now time.Time, interval time.Duration) {
	fresh := func(s autoscale.Signal) (float64, bool) {
		v, ok := read.Samples[s]
		return v.Value, ok && now.Sub(v.Time) <= 2*interval
	}
	plan := p.Status.Plan
	tx, ok1 := fresh(autoscale.BrokerTransmitBytes)
	rx, ok2 := fresh(autoscale.BrokerReceiveBytes)
	if ok1 && ok2 && plan.Brokers > 0 && plan.LinkUsableBytesPerSecond > 0 {
		recv, send := planpkg.PartitionPlacement{Partitions: plan.Partitions, ReplicationFactor: plan.ReplicationFactor}.
			Busiest(rx, tx, plan.Brokers)
		pipelinemetrics.SetBrokerLinkUtilization(p.Namespace, p.Name, max(recv, send)/float64(plan.LinkUsableBytesPerSecond))
	}
	if cache, ok := fresh(autoscale.ExecutorPageCacheBytes); ok && !plan.ExecutorMemory.PageCache.IsZero() {
		pipelinemetrics.SetExecutorPageCacheRatio(p.Namespace, p.Name, cache/float64(plan.ExecutorMemory.PageCache.Value()))
	}
}

// tierList is the pipeline's tiers as plan.Compute takes them.
func tierList(p *v1alpha1.AnalyticsPipeline, tiers map[string]*v1alpha1.StorageTier) []v1alpha1.StorageTier {
	list := make([]v1alpha1.StorageTier, 0, len(tiers))
	for _, name := range tierNames(p) {
		if t, ok := tiers[name]; ok {
			list = append(list, *t)
		}
	}
	return list
}

// removeCondition drops a condition that no longer applies (autoscaling switched off).
func removeCondition(conds conditions, condType string) {
	kept := (*conds.list)[:0]
	for _, c := range *conds.list {
		if c.Type != condType {
			kept = append(kept, c)
		}
	}
	*conds.list = kept
}
