package controllers

import (
	"context"
	"fmt"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/internal/autoscale"
	autoscaleprom "github.com/strata-dev/strata/internal/autoscale/prometheus"
	"github.com/strata-dev/strata/internal/plan"
)

// AutoscalingReconciler reads each autoscaled pipeline's metrics from Prometheus every interval,
// on workers of its own, and decides with autoscale.Recommend. It is apart from the pipeline
// reconciler so that a slow or silent Prometheus holds up only the readings, never the
// reconciles of other pipelines; ECK splits its Elasticsearch autoscaling off the same way
// (elastic/cloud-on-k8s v3.5.0, pkg/controller/autoscaling/elasticsearch: its own controller
// computes the resources and the Elasticsearch controller applies them).
//
// It writes nothing to the API server: it hands each reading's outcome to the pipeline
// reconciler (Autoscaler.outcome) and wakes it, and the pipeline reconciler plans with the
// targets and writes them into status.autoscaling in its one status write.
type AutoscalingReconciler struct {
	Pipelines  *PipelineReconciler
	Autoscaler *Autoscaler
	// wake enqueues a pipeline for the pipeline reconciler.
	wake chan<- event.GenericEvent
}

// Reconcile reads one pipeline's signals, decides, and looks again after the interval.
func (r *AutoscalingReconciler) Reconcile(ctx context.Context, req reconcile.Request) (ctrl.Result, error) {
	p := &v1alpha1.AnalyticsPipeline{}
	if err := r.Pipelines.Client.Get(ctx, req.NamespacedName, p); err != nil {
		if apierrors.IsNotFound(err) {
			r.Autoscaler.Forget(req.NamespacedName)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	spec := p.Spec.Autoscaling
	if p.DeletionTimestamp != nil || spec == nil || !spec.Enabled {
		r.Autoscaler.Forget(req.NamespacedName)
		return ctrl.Result{}, nil
	}
	a := r.Autoscaler
	interval := autoscale.Interval(spec)
	prior := a.prior(p)
	now := a.now()
	if since := now.Sub(lastReading(prior)); since >= 0 && since < interval/2 {
		return ctrl.Result{RequeueAfter: interval - since}, nil // read moments ago
	}
	queries, err := autoscaleprom.Queries(p)
	if err != nil {
		// The pipeline reconciler reports it; not retried until the spec changes.
		return ctrl.Result{}, nil
	}
	if p.Status.Plan == nil {
		return ctrl.Result{RequeueAfter: interval}, nil // nothing runs yet whose metrics could be read
	}
	out := r.read(ctx, p, prior, queries, now)
	a.record(p, out)
	select {
	case r.wake <- event.GenericEvent{Object: p}:
	case <-ctx.Done():
	}
	return ctrl.Result{RequeueAfter: interval}, nil
}

// read is one reading: the signals, the policy from what the upstream operators report, and
// the decision.
func (r *AutoscalingReconciler) read(ctx context.Context, p *v1alpha1.AnalyticsPipeline,
	prior *v1alpha1.AutoscalingStatus, queries map[autoscale.Signal]string, now time.Time) outcome {
	out := outcome{uid: p.UID, at: now}
	tiers, _, err := r.Pipelines.tiers(ctx, p)
	if err != nil {
		out.err = fmt.Errorf("reading the pipeline's tiers: %w", err)
		return out
	}
	base, err := plan.Fresh(autoscale.Base(p, prior), tierList(p, tiers))
	if err != nil {
		out.err = err
		return out
	}
	src, err := r.Autoscaler.source(p)
	var read autoscale.Observations
	if err == nil {
		read, err = src.Read(ctx, queries, now)
	}
	if err != nil {
		out.err = err
		return out
	}
	missing, err := missingKinds(r.Pipelines.Mapper)
	if err != nil {
		out.err = err
		return out
	}
	served := servedKinds(missing)
	obs, err := r.Pipelines.observe(ctx, p, served)
	if err != nil {
		out.err = err
		return out
	}
	cur := p.DeepCopy()
	cur.Status.Autoscaling = prior
	pol := policy(cur, base, obs, r.Pipelines.brokerSafety(ctx, p, obs, served))
	d := autoscale.Recommend(currentState(cur), read, pol, now)
	r.Pipelines.announceDecisions(ctx, p, d)
	out.decision, out.read = &d, read
	return out
}

// SetupWithManager registers the autoscaling controller: pipelines whose spec changes are read
// again at once, then every interval; a few readings run at once.
func (r *AutoscalingReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named("autoscaling").
		// Four readings at once: an estimate (a silent Prometheus holds a worker for the read
		// deadline), not overridable.
		WithOptions(controller.Options{MaxConcurrentReconciles: 4}).
		For(&v1alpha1.AnalyticsPipeline{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Complete(r.Pipelines.instruments.reconciler("autoscaling", r))
}

// outcome is what one reading came to, for the pipeline reconciler.
type outcome struct {
	uid types.UID
	at  time.Time
	// decision and read are the reading's decision and signals; err why there is none.
	decision *autoscale.Decision
	read     autoscale.Observations
	err      error
}

// conditionMessage is what the Autoscaling condition says of an outcome.
func (o outcome) conditionMessage(interval time.Duration) (ok bool, reason, msg string) {
	switch {
	case o.err != nil:
		return false, v1alpha1.ReasonMetricsUnavailable, o.err.Error() + ", so nothing is scaled"
	case len(o.decision.Missing) > 0:
		return false, v1alpha1.ReasonMetricsUnavailable,
			"no fresh samples, so what they drive is not scaled: " + strings.Join(o.decision.Missing, ", ")
	}
	return true, v1alpha1.ReasonAutoscalingActive,
		strings.TrimSuffix(fmt.Sprintf("reading Prometheus every %s: %s", interval, o.decision.Summary), ": ")
}
