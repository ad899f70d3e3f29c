package controllers

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/internal/desired"
	pipelinemetrics "github.com/strata-dev/strata/internal/metrics"
	"github.com/strata-dev/strata/internal/plan"
)

// PipelineReconciler turns an AnalyticsPipeline and its StorageTiers into a plan and the
// upstream objects that realise it.
type PipelineReconciler struct {
	Client   client.Client
	Recorder events.EventRecorder
	// Mapper tells which upstream kinds the API server serves.
	Mapper meta.RESTMapper

	// Autoscaler reads the pipelines' metrics when spec.autoscaling is on; nil: Prometheus.
	Autoscaler *Autoscaler

	applier *applier
	watches *childWatches
	// readings carries the autoscaling controller's wake-ups: a reading is ready.
	readings chan event.GenericEvent
}

// +kubebuilder:rbac:groups=strata.dev,resources=analyticspipelines,verbs=get;list;watch
// +kubebuilder:rbac:groups=strata.dev,resources=analyticspipelines/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=strata.dev,resources=storagetiers,verbs=get;list;watch
// +kubebuilder:rbac:groups=apiextensions.k8s.io,resources=customresourcedefinitions,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
// +kubebuilder:rbac:groups=kafka.strimzi.io,resources=kafkas;kafkanodepools;kafkatopics;kafkarebalances,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=sparkoperator.k8s.io,resources=sparkapplications,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=elasticsearch.k8s.elastic.co,resources=elasticsearches,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get;list;watch;create;update;patch;delete

// Reconcile reads like its steps: observe, plan (pure), build the desired children (pure), apply
// them, prune what the plan no longer wants, and write the status once.
func (r *PipelineReconciler) Reconcile(ctx context.Context, req reconcile.Request) (ctrl.Result, error) {
	p := &v1alpha1.AnalyticsPipeline{}
	if err := r.Client.Get(ctx, req.NamespacedName, p); err != nil {
		if apierrors.IsNotFound(err) {
			r.forget(req.NamespacedName)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if p.DeletionTimestamp != nil {
		r.forget(req.NamespacedName)
		return ctrl.Result{}, nil // children go with it, by their owner references
	}
	before := p.DeepCopy()
	conds := conditions{list: &p.Status.Conditions, generation: p.Generation}

	missing, err := missingKinds(r.Mapper)
	if err != nil {
		return ctrl.Result{}, err
	}
	served := servedChildKinds(missing)
	if err := r.watches.ensure(served); err != nil {
		return ctrl.Result{}, err
	}
	tiers, absent, err := r.tiers(ctx, p)
	if err != nil {
		return ctrl.Result{}, err
	}
	obs, existing, err := r.observe(ctx, p, served)
	if err != nil {
		return ctrl.Result{}, err
	}

	setStorageCondition(conds, tiers, absent)
	// The autoscaler's targets act as overrides on the spec: the plan stays the one path.
	effective, recheck := r.autoscale(ctx, p, tiers, obs, served, conds)
	planned, ok := r.plan(effective, tiers, obs, conds)
	var applyErr error
	if ok {
		if applyErr = r.applyChildren(ctx, p, planned, obs, existing, served); applyErr == nil {
			p.Status.Plan = &planned
		}
	}
	setChildConditions(conds, p, missing, obs)
	if applyErr != nil {
		// Say what failed where users look, then retry with backoff.
		conds.set(conditionFor(applyErr), metav1.ConditionFalse, v1alpha1.ReasonApplyFailed, applyErr.Error())
	}
	setReadyCondition(conds)
	p.Status.ObservedGeneration = p.Generation

	if len(missing) > 0 && !meta.IsStatusConditionFalse(before.Status.Conditions, v1alpha1.ConditionKafkaReady) {
		log.FromContext(ctx).Info("upstream CRDs missing; waiting for them", "missing", kindNames(missing))
	}
	announceTransitions(r.Recorder, p, before.Status.Conditions, p.Status.Conditions)
	pipelinemetrics.Observe(p) // the plan, stage capacities, bottleneck, storage cost, conditions
	if err := patchStatus(ctx, r.Client, p, before, before.Status, p.Status); err != nil {
		return ctrl.Result{}, err
	}
	if applyErr != nil {
		return ctrl.Result{}, applyErr
	}
	if len(missing) > 0 {
		// A new CRD's event can arrive before the API server's discovery serves its kind, and
		// no further event follows: look again a little later.
		recheck = min(recheck, missingCRDRecheck)
		if recheck == 0 {
			recheck = missingCRDRecheck
		}
	}
	return ctrl.Result{RequeueAfter: recheck}, nil // an autoscaled pipeline is read every interval
}

// missingCRDRecheck is how often a pipeline waiting for an upstream CRD looks again.
const missingCRDRecheck = 15 * time.Second

// observe reads the pipeline's children of every served kind from the cache.
func (r *PipelineReconciler) observe(ctx context.Context, p *v1alpha1.AnalyticsPipeline,
	served []schema.GroupVersionKind) (observed, map[schema.GroupVersionKind][]*unstructured.Unstructured, error) {
	obs := observed{}
	existing := map[schema.GroupVersionKind][]*unstructured.Unstructured{}
	for _, gvk := range served {
		objs, err := children(ctx, r.Client, gvk, p)
		if err != nil {
			return nil, nil, err
		}
		existing[gvk] = objs
		for _, o := range objs {
			obs[keyOf(o)] = o
		}
	}
	return obs, existing, nil
}

// plan computes the plan and sets PlanValid. An invalid spec is not retried: the next change to
// the pipeline or its tiers triggers the next attempt. Partitions never shrink: Kafka cannot
// remove them.
func (r *PipelineReconciler) plan(p *v1alpha1.AnalyticsPipeline, tiers map[string]*v1alpha1.StorageTier,
	obs observed, conds conditions) (v1alpha1.Plan, bool) {
	list := make([]v1alpha1.StorageTier, 0, len(tiers))
	for _, name := range tierNames(p) {
		if t, ok := tiers[name]; ok {
			list = append(list, *t)
		}
	}
	planned, err := plan.Compute(p, list)
	switch {
	case plan.IsMissingTier(err):
		conds.set(v1alpha1.ConditionPlanValid, metav1.ConditionFalse, v1alpha1.ReasonTierNotFound,
			err.Error()+": the pipeline is planned when the tier exists")
		return planned, false
	case err != nil:
		conds.set(v1alpha1.ConditionPlanValid, metav1.ConditionFalse, v1alpha1.ReasonInvalidSpec, err.Error())
		return planned, false
	}
	msg := fmt.Sprintf("%d brokers, %d executors, %d data nodes; bottleneck %s", planned.Brokers,
		planned.Executors, planned.ElasticsearchDataNodes, planned.Bottleneck)
	if current := topicPartitions(obs, p); current > planned.Partitions {
		msg += fmt.Sprintf("; the topic keeps its %d partitions although the plan wants %d: Kafka cannot remove partitions",
			current, planned.Partitions)
		planned.Partitions = current
	}
	if planned.Unsatisfied != "" {
		conds.set(v1alpha1.ConditionPlanValid, metav1.ConditionFalse, v1alpha1.ReasonCapacityExceeded,
			planned.Unsatisfied+" (applied at the spec's bounds)")
		return planned, true
	}
	conds.set(v1alpha1.ConditionPlanValid, metav1.ConditionTrue, v1alpha1.ReasonPlanned, msg)
	return planned, true
}

// applyChildren applies the desired children of every served kind and deletes the pipeline's
// children the plan no longer wants.
func (r *PipelineReconciler) applyChildren(ctx context.Context, p *v1alpha1.AnalyticsPipeline, planned v1alpha1.Plan,
	obs observed, existing map[schema.GroupVersionKind][]*unstructured.Unstructured, served []schema.GroupVersionKind) error {
	isServed := map[schema.GroupVersionKind]bool{}
	for _, gvk := range served {
		isServed[gvk] = true
	}
	wanted := map[objectKey]bool{}
	for _, obj := range desired.All(desired.Inputs{Pipeline: p, Plan: planned}) {
		if !isServed[obj.GroupVersionKind()] {
			continue
		}
		wanted[keyOf(obj)] = true
		live, err := r.applier.apply(ctx, obj, obs[keyOf(obj)])
		if err != nil {
			return &applyError{gvk: obj.GroupVersionKind(), err: err}
		}
		// The status is computed from the children as the server now has them: the cache may
		// not have seen this apply yet, and a status from it would be rewritten a moment later.
		obs[keyOf(obj)] = live
	}
	for _, gvk := range served {
		if _, err := r.applier.prune(ctx, existing[gvk], wanted); err != nil {
			return &applyError{gvk: gvk, err: err}
		}
	}
	return nil
}

// applyError is a failure to apply or prune a child of one kind.
type applyError struct {
	gvk schema.GroupVersionKind
	err error
}

func (e *applyError) Error() string { return e.err.Error() }
func (e *applyError) Unwrap() error { return e.err }

// conditionFor names the condition of the child kind an apply error is about.
func conditionFor(err error) string {
	var ae *applyError
	if errors.As(err, &ae) {
		for _, k := range UpstreamKinds {
			if k.GVK == ae.gvk {
				return k.Condition
			}
		}
	}
	return v1alpha1.ConditionKafkaReady // the metrics ConfigMap belongs to Kafka
}

// setChildConditions sets KafkaReady, SparkReady and ElasticsearchReady from the children's own
// status, or from the missing CRDs.
func setChildConditions(conds conditions, p *v1alpha1.AnalyticsPipeline, missing []UpstreamKind, obs observed) {
	statuses := map[string]func() childStatus{
		v1alpha1.ConditionKafkaReady: func() childStatus {
			return kafkaStatus(obs.get(desired.KafkaGVK, p.Namespace, desired.KafkaName(p)),
				obs.get(desired.KafkaTopicGVK, p.Namespace, desired.KafkaTopicName(p)))
		},
		v1alpha1.ConditionSparkReady: func() childStatus {
			return sparkStatus(obs.get(desired.SparkApplicationGVK, p.Namespace, desired.SparkApplicationName(p)))
		},
		v1alpha1.ConditionElasticsearchReady: func() childStatus {
			return elasticsearchStatus(obs.get(desired.ElasticsearchGVK, p.Namespace, desired.ElasticsearchName(p)))
		},
	}
	for _, c := range []string{v1alpha1.ConditionKafkaReady, v1alpha1.ConditionSparkReady, v1alpha1.ConditionElasticsearchReady} {
		if msg := missingMessage(missing, c); msg != "" {
			conds.set(c, metav1.ConditionFalse, v1alpha1.ReasonUpstreamCRDMissing, msg)
			continue
		}
		s := statuses[c]()
		conds.set(c, s.status, s.reason, s.message)
	}
}

// tiers returns the StorageTiers the pipeline names, by name, and the names that do not exist.
func (r *PipelineReconciler) tiers(ctx context.Context, p *v1alpha1.AnalyticsPipeline) (map[string]*v1alpha1.StorageTier, []string, error) {
	found := map[string]*v1alpha1.StorageTier{}
	var absent []string
	for _, name := range tierNames(p) {
		t := &v1alpha1.StorageTier{}
		err := r.Client.Get(ctx, client.ObjectKey{Name: name}, t)
		switch {
		case apierrors.IsNotFound(err):
			absent = append(absent, name)
		case err != nil:
			return nil, nil, err
		default:
			found[name] = t
		}
	}
	return found, absent, nil
}

// tierNames lists the distinct tiers a pipeline names, sorted.
func tierNames(p *v1alpha1.AnalyticsPipeline) []string {
	set := map[string]bool{}
	for _, n := range []string{p.Spec.Kafka.Storage.Tier, p.Spec.Spark.Shuffle.SpillTier,
		p.Spec.Spark.Shuffle.DataTier, p.Spec.Elasticsearch.Storage.Tier} {
		if n != "" {
			set[n] = true
		}
	}
	names := make([]string, 0, len(set))
	for n := range set {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func setStorageCondition(conds conditions, tiers map[string]*v1alpha1.StorageTier, absent []string) {
	if len(absent) > 0 {
		conds.set(v1alpha1.ConditionStorageReady, metav1.ConditionFalse, v1alpha1.ReasonTierNotFound,
			fmt.Sprintf("StorageTier %s not found", strings.Join(quoteAll(absent), ", ")))
		return
	}
	var notReady []string
	for name, t := range tiers {
		if !meta.IsStatusConditionTrue(t.Status.Conditions, v1alpha1.ConditionReady) {
			notReady = append(notReady, name)
		}
	}
	sort.Strings(notReady)
	if len(notReady) > 0 {
		conds.set(v1alpha1.ConditionStorageReady, metav1.ConditionFalse, v1alpha1.ReasonProgressing,
			fmt.Sprintf("StorageTier %s not Ready", strings.Join(quoteAll(notReady), ", ")))
		return
	}
	conds.set(v1alpha1.ConditionStorageReady, metav1.ConditionTrue, v1alpha1.ReasonAvailable, "every StorageTier is Ready")
}

// setReadyCondition sums the other conditions up: Ready is True only when all of them are.
func setReadyCondition(conds conditions) {
	for _, c := range []string{v1alpha1.ConditionPlanValid, v1alpha1.ConditionStorageReady,
		v1alpha1.ConditionKafkaReady, v1alpha1.ConditionSparkReady, v1alpha1.ConditionElasticsearchReady} {
		cond := meta.FindStatusCondition(*conds.list, c)
		if cond == nil || cond.Status != metav1.ConditionTrue {
			reason, msg := v1alpha1.ReasonProgressing, c+" is not yet known"
			if cond != nil {
				reason, msg = cond.Reason, c+": "+cond.Message
			}
			conds.set(v1alpha1.ConditionReady, metav1.ConditionFalse, reason, msg)
			return
		}
	}
	conds.set(v1alpha1.ConditionReady, metav1.ConditionTrue, v1alpha1.ReasonAvailable, "the pipeline runs as planned")
}

func quoteAll(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = fmt.Sprintf("%q", n)
	}
	return out
}

func kindNames(kinds []UpstreamKind) []string {
	out := make([]string, len(kinds))
	for i, k := range kinds {
		out[i] = k.GVK.String()
	}
	return out
}

// SetupWithManager watches pipelines, the tiers they name, and the upstream CRDs, so that a tier
// or an operator installed later brings a waiting pipeline forward.
func (r *PipelineReconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager) error {
	if err := mgr.GetFieldIndexer().IndexField(ctx, &v1alpha1.AnalyticsPipeline{}, tierIndex, indexTiers); err != nil {
		return err
	}
	upstream := upstreamCRDNames()
	r.applier = newApplier(r.Client)
	c, err := ctrl.NewControllerManagedBy(mgr).
		Named("analyticspipeline").
		// Reconciles wait on the API server most of the time; a few at once keep it busy.
		WithOptions(controller.Options{MaxConcurrentReconciles: 4}).
		For(&v1alpha1.AnalyticsPipeline{}, builder.WithPredicates(predicate.Or(
			predicate.GenerationChangedPredicate{}, predicate.LabelChangedPredicate{}))).
		Watches(&v1alpha1.StorageTier{}, handler.EnqueueRequestsFromMapFunc(r.pipelinesNaming)).
		Watches(&apiextensionsv1.CustomResourceDefinition{}, handler.EnqueueRequestsFromMapFunc(r.allPipelines),
			builder.OnlyMetadata, builder.WithPredicates(predicate.NewPredicateFuncs(func(o client.Object) bool {
				return upstream[o.GetName()]
			}))).
		WatchesRawSource(source.Channel(r.readings, &handler.EnqueueRequestForObject{})).
		Build(r)
	if err != nil {
		return err
	}
	r.watches = &childWatches{controller: c, cache: mgr.GetCache(), scheme: mgr.GetScheme(),
		mapper: mgr.GetRESTMapper(), watched: map[schema.GroupVersionKind]bool{}}
	return nil
}

// tierIndex indexes pipelines by the tiers they name, so a tier event finds its pipelines
// without listing all of them.
const tierIndex = "strata.dev/tiers"

func indexTiers(o client.Object) []string {
	return tierNames(o.(*v1alpha1.AnalyticsPipeline))
}

// pipelinesNaming maps a tier to the pipelines that name it.
func (r *PipelineReconciler) pipelinesNaming(ctx context.Context, tier client.Object) []reconcile.Request {
	list := &v1alpha1.AnalyticsPipelineList{}
	if err := r.Client.List(ctx, list, client.MatchingFields{tierIndex: tier.GetName()}); err != nil {
		log.FromContext(ctx).Error(err, "listing pipelines for a tier", "tier", tier.GetName())
		return nil
	}
	reqs := make([]reconcile.Request, 0, len(list.Items))
	for i := range list.Items {
		reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
	}
	return reqs
}

// allPipelines maps an upstream CRD event to every pipeline: any of them may be waiting for it.
func (r *PipelineReconciler) allPipelines(ctx context.Context, _ client.Object) []reconcile.Request {
	list := &v1alpha1.AnalyticsPipelineList{}
	if err := r.Client.List(ctx, list); err != nil {
		log.FromContext(ctx).Error(err, "listing pipelines for a CRD change")
		return nil
	}
	reqs := make([]reconcile.Request, 0, len(list.Items))
	for i := range list.Items {
		reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
	}
	return reqs
}

// forget drops what the operator keeps of a deleted pipeline: its metrics and the autoscaler's
// memory of it.
func (r *PipelineReconciler) forget(key types.NamespacedName) {
	pipelinemetrics.Forget(key.Namespace, key.Name)
	if r.Autoscaler != nil {
		r.Autoscaler.Forget(key)
	}
}
