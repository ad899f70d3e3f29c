package autoscaling

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/internal/autoscale"
	autoscaleprom "github.com/strata-dev/strata/internal/autoscale/prometheus"
	pipelinemetrics "github.com/strata-dev/strata/internal/metrics"
	planpkg "github.com/strata-dev/strata/internal/plan"
)

// Autoscaler is the autoscaling reconciler's link to the pipelines' metrics. The zero value reads
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

// currentState is what runs now: the applied plan's counts, and the split and rate it used.
func currentState(p *v1alpha1.AnalyticsPipeline) autoscale.State {
	return autoscale.NewState(p, *p.Status.Plan, p.Status.Autoscaling)
}

// announceDecisions records an event for each decision and counts it.
func (r *Reconciler) announceDecisions(ctx context.Context, p *v1alpha1.AnalyticsPipeline, d autoscale.Decision) {
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
