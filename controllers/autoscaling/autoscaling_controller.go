package autoscaling

import (
	"context"
	"fmt"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/controllers/internal/setup"
	"github.com/strata-dev/strata/internal/autoscale"
	autoscaleprom "github.com/strata-dev/strata/internal/autoscale/prometheus"
	"github.com/strata-dev/strata/internal/plan"
)

// Reconciler reads each autoscaled pipeline's metrics from Prometheus every interval, on
// workers of its own, and decides with autoscale.Recommend. It is apart from the pipeline
// reconciler so that a slow or silent Prometheus holds up only the readings, never the
// reconciles of other pipelines; ECK splits its Elasticsearch autoscaling off the same way
// (elastic/cloud-on-k8s v3.5.0, pkg/controller/autoscaling/elasticsearch: its own controller
// computes the resources, persists them in its status, and the Elasticsearch controller applies
// them).
//
// It writes its decision itself, to status.autoscaling and the Autoscaling condition under its
// own field manager (autoscaling_status.go); the pipeline reconciler is woken by that write
// (controllers/pipeline's autoscalingWritten) and plans with the targets it reads from the
// pipeline. Nothing passes between the two in memory: a restarted operator continues from the
// status.
type Reconciler struct {
	Client client.Client
	// Recorder records the decisions and the Autoscaling condition's changes (on the pipeline,
	// under the pipeline controller's name: controllers.Setup gives it that one).
	Recorder   events.EventRecorder
	Autoscaler *Autoscaler
	// Cluster is what a reading needs of the cluster besides the metrics (controllers.Setup
	// gives it the pipeline reconciler, which reads them from its caches).
	Cluster Cluster
	// Instruments are the tests' (controllers.WithInstruments); none in production.
	Instruments setup.Instruments
}

// Cluster is what a reading needs of the cluster besides the metrics: the tiers to plan the
// base with, and what Strimzi and the Spark operator report now. The pipeline reconciler
// (controllers/pipeline) reads both for its own plan; asking it, rather than reading them again
// here, keeps one way of reading a pipeline's children and tiers, and this package free of it.
type Cluster interface {
	// TierList returns the StorageTiers the pipeline names, as plan.Compute takes them.
	TierList(ctx context.Context, p *v1alpha1.AnalyticsPipeline) ([]v1alpha1.StorageTier, error)
	// Policy is what Recommend decides with (autoscale.NewPolicy) from the base plan, with
	// whether brokers may leave and the job runs, as Strimzi and the Spark operator report now.
	Policy(ctx context.Context, p *v1alpha1.AnalyticsPipeline, base v1alpha1.Plan) (autoscale.Policy, error)
}

// conflictRetry is how soon a reading whose write met a newer pipeline is made again: the
// cache has the newer pipeline within moments.
const conflictRetry = time.Second

// Reconcile reads one pipeline's signals, decides, writes the decision, and looks again after
// the interval.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (ctrl.Result, error) {
	p := &v1alpha1.AnalyticsPipeline{}
	if err := r.Client.Get(ctx, req.NamespacedName, p); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	spec := p.Spec.Autoscaling
	if p.DeletionTimestamp != nil || spec == nil || !spec.Enabled {
		// The pipeline reconciler removes status.autoscaling and the condition with the spec.
		return ctrl.Result{}, nil
	}
	interval := autoscale.Interval(spec)
	queries, err := autoscaleprom.Queries(p)
	if err != nil {
		// Not retried: the next change of the spec brings the next attempt. The targets
		// decided so far still apply.
		return r.write(ctx, p, verdict{status: p.Status.Autoscaling, cond: metav1.ConditionFalse,
			reason: v1alpha1.ReasonInvalidQuery, message: err.Error()}, nil, ctrl.Result{})
	}
	if p.Status.Plan == nil {
		// Nothing runs yet whose metrics could be read; the first plan brings the first
		// reading (planAppeared).
		return r.write(ctx, p, verdict{status: p.Status.Autoscaling, cond: metav1.ConditionFalse,
			reason: v1alpha1.ReasonProgressing, message: "waiting for the first plan to be applied"}, nil, ctrl.Result{})
	}
	now := r.Autoscaler.now()
	if since := now.Sub(lastReading(p.Status.Autoscaling)); since >= 0 && since < interval/2 {
		return ctrl.Result{RequeueAfter: interval - since}, nil // read moments ago
	}
	out := r.read(ctx, p, queries, now)
	v := verdict{status: p.Status.Autoscaling}
	if out.decision != nil {
		v.status = &out.decision.Status
	}
	good, reason, msg := out.conditionMessage(interval)
	v.cond, v.reason, v.message = metav1.ConditionFalse, reason, msg
	if good {
		v.cond = metav1.ConditionTrue
	}
	res, err := r.write(ctx, p, v, out.decision, ctrl.Result{RequeueAfter: interval})
	if err == nil && res.RequeueAfter != conflictRetry && out.decision != nil {
		// Published for a written decision only: a conflict makes the reading again.
		observeUtilization(p, out.read, now, interval)
	}
	return res, err
}

// write writes a verdict and announces the decision it carries once written. A conflict (the
// pipeline changed since it was read) makes the reading again, from the newer pipeline.
func (r *Reconciler) write(ctx context.Context, p *v1alpha1.AnalyticsPipeline, v verdict,
	d *autoscale.Decision, res ctrl.Result) (ctrl.Result, error) {
	if err := r.writeVerdict(ctx, p, v); err != nil {
		if apierrors.IsConflict(err) {
			return ctrl.Result{RequeueAfter: conflictRetry}, nil
		}
		return ctrl.Result{}, err
	}
	if d != nil {
		r.announceDecisions(ctx, p, *d)
	}
	return res, nil
}

// read is one reading: the signals, the policy from what the upstream operators report, and
// the decision.
func (r *Reconciler) read(ctx context.Context, p *v1alpha1.AnalyticsPipeline,
	queries map[autoscale.Signal]string, now time.Time) outcome {
	out := outcome{}
	prior := p.Status.Autoscaling
	tiers, err := r.Cluster.TierList(ctx, p)
	if err != nil {
		out.err = fmt.Errorf("reading the pipeline's tiers: %w", err)
		return out
	}
	base, err := plan.Fresh(autoscale.Base(p, prior), tiers)
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
	pol, err := r.Cluster.Policy(ctx, p, base)
	if err != nil {
		out.err = err
		return out
	}
	d := autoscale.Recommend(currentState(p), read, pol, now)
	out.decision, out.read = &d, read
	return out
}

// SetupWithManager registers the autoscaling controller: pipelines whose spec changes, or that
// get their first plan, are read at once, then every interval; a few readings run at once.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named("autoscaling").
		// Four readings at once: an estimate (a silent Prometheus holds a worker for the read
		// deadline), not overridable.
		WithOptions(controller.Options{MaxConcurrentReconciles: 4}).
		For(&v1alpha1.AnalyticsPipeline{}, builder.WithPredicates(predicate.Or[client.Object](predicate.GenerationChangedPredicate{}, planAppeared))).
		Complete(r.Instruments.Wrap("autoscaling", r))
}

// outcome is what one reading came to.
type outcome struct {
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
