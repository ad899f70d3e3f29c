package pipeline

import (
	"context"
	"errors"
	"sort"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/controllers/internal/status"
	pipelinemetrics "github.com/strata-dev/strata/internal/metrics"
)

// scope is what one reconcile of a pipeline knows, filled in step by step (as in Cluster API's
// topology controller): what it read, what it computed, and the status it builds. Steps talk
// to each other only through it.
type scope struct {
	// pipeline is the pipeline as read, whose status the steps build in place; before is a
	// copy as read: the base of the status patch and of the condition transitions.
	pipeline, before *v1alpha1.AnalyticsPipeline
	conds            status.Conditions

	// Observations.
	missing     []ChildKind               // child kinds the API server does not serve
	served      []schema.GroupVersionKind // child kinds it serves
	tiers       map[string]*v1alpha1.StorageTier
	absentTiers []string
	observed    observed // the children, by identity; the apply step records the server's answers

	// Computed.
	targets    *v1alpha1.AutoscalingStatus // the autoscaler's targets the plan is computed with
	plan       v1alpha1.Plan
	planned    bool   // plan is valid enough to apply
	esPassword string // the job's Elasticsearch password (credentialsStep)
	// emptyBrokers: the broker to empty before the pool goes from two brokers to one (plan.Compute)
	emptyBrokers []int32
	desired      []*unstructured.Unstructured
	failures     []*childError // children the API server refused to apply or delete
	// recheck: a child waits for its operator's first status, or a remove-brokers rebalance
	// to be asked again (removalRefresh); look again then (0: no need).
	recheck time.Duration
	// retained: what the claims of a retained Kafka cluster of the pipeline's name record
	// (retained_claims.go); nil until read, at most once a reconcile.
	retained *retainedCluster
}

// load reads the pipeline and returns its scope; nil when there is nothing to reconcile (the
// pipeline is gone or being deleted: what the operator kept about it is forgotten).
func (r *Reconciler) load(ctx context.Context, req reconcile.Request) (*scope, time.Duration, error) {
	p := &v1alpha1.AnalyticsPipeline{}
	if err := r.Client.Get(ctx, req.NamespacedName, p); err != nil {
		if apierrors.IsNotFound(err) {
			r.forget(req.NamespacedName)
		}
		return nil, 0, client.IgnoreNotFound(err)
	}
	if p.DeletionTimestamp != nil {
		r.forget(req.NamespacedName)
		if err := r.finalizeRetained(ctx, p); err != nil {
			return nil, 0, err
		}
		after, err := r.finalizeDeleted(ctx, p)
		return nil, after, err
	}
	return &scope{
		pipeline: p,
		before:   p.DeepCopy(),
		conds:    status.Conditions{List: &p.Status.Conditions, Generation: p.Generation},
		observed: observed{},
	}, 0, nil
}

// forget drops what the operator keeps about a deleted pipeline: its metrics and its applied
// children's cache entries.
func (r *Reconciler) forget(key client.ObjectKey) {
	pipelinemetrics.Forget(key.Namespace, key.Name)
	r.Applier.ForgetScope(pipelineScope(key))
	r.takenBack.forget(key)
}

// writeStatus ends every reconcile: it announces the conditions that changed, publishes the
// metrics, and writes the status if it changed.
func (r *Reconciler) writeStatus(ctx context.Context, s *scope) error {
	p := s.pipeline
	if len(s.missing) > 0 && !meta.IsStatusConditionFalse(s.before.Status.Conditions, v1alpha1.ConditionKafkaReady) {
		log.FromContext(ctx).Info("upstream CRDs missing; waiting for them", "missing", kindNames(s.missing))
	}
	pipelinemetrics.Observe(p) // the plan, stage capacities, bottleneck, storage cost, conditions
	if equality.Semantic.DeepEqual(s.before.Status, p.Status) {
		return nil
	}
	// Two writers share the status: the autoscaling controller applies status.autoscaling and
	// the Autoscaling condition (autoscaling_status.go). A merge patch replaces the conditions
	// list whole, so it is sent only against the pipeline it was computed from: had the
	// autoscaler written since, the API server answers Conflict and the reconcile runs again
	// (Reconcile) from the newer pipeline, rather than put back the condition it replaced.
	patch := client.MergeFromWithOptions(s.before, client.MergeFromWithOptimisticLock{})
	if err := r.Client.Status().Patch(ctx, p, patch); err != nil {
		return err
	}
	// Announced once written: a reconcile run again after a conflict announces nothing twice.
	status.AnnounceTransitions(r.Recorder, p, s.before.Status.Conditions, p.Status.Conditions)
	return nil
}

// missingCRDRecheck is how often a pipeline waiting for an upstream CRD looks again.
const missingCRDRecheck = 15 * time.Second

// result says when to look again: a pipeline waiting for a CRD soon, because a new CRD's event
// can arrive before the API server's discovery serves its kind, and no further event follows.
// Autoscaled pipelines need no timer: the autoscaling controller's status writes wake them (autoscalingWritten).
func (s *scope) result() ctrl.Result {
	if len(s.missing) > 0 {
		return ctrl.Result{RequeueAfter: missingCRDRecheck}
	}
	// A child waiting for its operator's first status: no event comes if none does
	// (pipeline_unreconciled.go).
	return ctrl.Result{RequeueAfter: s.recheck}
}

// applyErr joins the children's failures (nil when there are none): the reconcile is retried
// with backoff.
func (s *scope) applyErr() error {
	errs := make([]error, len(s.failures))
	for i, f := range s.failures {
		errs[i] = f
	}
	return errors.Join(errs...)
}

// failuresByCondition joins the failures' messages per condition that reports them, in a
// stable order (the message is part of the status).
func (s *scope) failuresByCondition() map[string]string {
	out := map[string]string{}
	sorted := append([]*childError(nil), s.failures...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Error() < sorted[j].Error() })
	for _, f := range sorted {
		c := f.condition()
		if out[c] != "" {
			out[c] += "; "
		}
		out[c] += f.Error()
	}
	return out
}
