package pipeline

import (
	"cmp"
	"context"
	"errors"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/controllers/internal/setup"
	"github.com/strata-dev/strata/internal/desired"
	"github.com/strata-dev/strata/internal/ssa"
)

// Reconciler turns an AnalyticsPipeline and its StorageTiers into a plan and the
// upstream objects that realise it.
type Reconciler struct {
	Client   client.Client
	Recorder events.EventRecorder
	// Mapper tells which upstream kinds the API server serves.
	Mapper meta.RESTMapper

	// Applier is the server-side-apply path the controllers share; nil: one of its own.
	Applier *ssa.Applier
	// APIReader reads what the operator does not cache (claims); nil: the manager's.
	APIReader client.Reader

	// IngestImage is Strata's job image for pipelines that name none; empty: the built-in
	// desired.DefaultIngestImage.
	IngestImage string
	// AllowUserServiceAccounts lets spec.spark.serviceAccountName run a driver as a
	// ServiceAccount of the user's (the manager's --allow-user-service-accounts, the chart's
	// spark.allowUserServiceAccounts); otherwise such a spec is refused with PlanValid=False.
	AllowUserServiceAccounts bool
	// UpstreamStatusTimeout is how long a child may go without any status from its operator
	// before the pipeline reports it NotReconciled (pipeline_unreconciled.go; the manager's
	// --upstream-status-timeout); 0 never does.
	UpstreamStatusTimeout time.Duration
	// Workers is how many pipelines are reconciled at once (the manager's --pipeline-workers);
	// 0: DefaultPipelineWorkers.
	Workers int

	watches *childWatches
	// podsIndexed: the cache has podPipelineIndex (SetupWithManager registered it).
	podsIndexed bool
	// takenBack remembers what ChildrenAsApplied said was taken back, per pipeline and
	// generation (pipeline_drift.go).
	takenBack takenBack
	// Instruments are the tests' (WithInstruments); none in production.
	Instruments setup.Instruments
}

// +kubebuilder:rbac:groups=strata.dev,resources=analyticspipelines,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=kafka.strimzi.io,resources=kafkas/status,verbs=get;patch
// +kubebuilder:rbac:groups="",resources=persistentvolumeclaims,verbs=list;patch
// +kubebuilder:rbac:groups=strata.dev,resources=analyticspipelines/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=strata.dev,resources=storagetiers,verbs=get;list;watch
// +kubebuilder:rbac:groups=apiextensions.k8s.io,resources=customresourcedefinitions,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
// +kubebuilder:rbac:groups=kafka.strimzi.io,resources=kafkas;kafkanodepools;kafkatopics;kafkarebalances;kafkausers,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=sparkoperator.k8s.io,resources=sparkapplications,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=elasticsearch.k8s.elastic.co,resources=elasticsearches,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups="",resources=persistentvolumeclaims,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups="",resources=serviceaccounts,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=rbac.authorization.k8s.io,resources=rolebindings,verbs=get;list;watch;create;update;patch;delete

// statusConflictRetry is how soon a reconcile whose status write met a newer pipeline runs
// again: the cache has the newer pipeline within moments.
const statusConflictRetry = time.Second

// DefaultPipelineWorkers is how many pipelines are reconciled at once by default. Four kept a
// loaded API server at a sixth of its write rate with 1,000 pipelines to create; sixteen keep
// more requests in flight, each a goroutine waiting on its answer (docs/performance.md).
const DefaultPipelineWorkers = 16

// Reconcile is a table of contents: each step reads or fills in the reconcile's scope and has
// one concern; the status the steps build is written on every exit, once, and only when it
// changed. Adding a step is a line here and a method in pipeline_steps.go.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (res ctrl.Result, err error) {
	s, after, err := r.load(ctx, req)
	if s == nil {
		// Gone or going: its children go with it, by their owner references, once its
		// finalizer let it go (pipeline_retain.go, pipeline_delete.go).
		return ctrl.Result{RequeueAfter: after}, err
	}
	defer func() {
		werr := r.writeStatus(ctx, s)
		if apierrors.IsConflict(werr) {
			// The pipeline changed since it was read (the autoscaler wrote): again, from it.
			res, werr = ctrl.Result{RequeueAfter: statusConflictRetry}, nil
		}
		err = errors.Join(err, werr)
	}()
	for _, step := range []func(context.Context, *scope) error{
		r.ensureFinalizer,  // the policy's finalizer: keep the Kafka data, or delete every Elasticsearch claim
		r.discoverKinds,    // which child kinds the API server serves; watch them
		r.readTiers,        // the StorageTiers the pipeline names: StorageReady
		r.observeChildren,  // the children as the cache has them
		r.autoscaleStep,    // the autoscaler's targets, as overrides on the spec
		r.planStep,         // the plan (pure): PlanValid
		r.credentialsStep,  // the job's Elasticsearch password: kept, or generated once
		r.buildDesired,     // the desired children (pure)
		r.kafkaClusterStep, // record the Kafka cluster ID; reuse a retained one
		r.childrenModified, // ChildrenAsApplied: fields another manager changed, taken back or left (pipeline_drift.go)
		r.applyChildren,    // apply every child, prune the unwanted; failures are collected
		r.reportPods,       // PodsScheduled: the pods the scheduler cannot place (pipeline_scheduling.go)
		r.reportChildren,   // KafkaReady, SparkReady, ElasticsearchReady from the children; Ready
	} {
		if err := step(ctx, s); err != nil {
			return ctrl.Result{}, err
		}
	}
	return s.result(), s.applyErr()
}

// SetupWithManager watches pipelines, the tiers they name, and the upstream CRDs, so that a tier
// or an operator installed later brings a waiting pipeline forward.
func (r *Reconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager) error {
	if err := mgr.GetFieldIndexer().IndexField(ctx, &v1alpha1.AnalyticsPipeline{}, tierIndex, indexTiers); err != nil {
		return err
	}
	if err := mgr.GetFieldIndexer().IndexField(ctx, &corev1.Pod{}, podPipelineIndex, podPipeline); err != nil {
		return err
	}
	r.podsIndexed = true
	upstream := upstreamCRDNames()
	if r.Applier == nil {
		r.Applier = ssa.New(r.Client, setup.FieldOwner, ssa.DefaultCacheSize)
	}
	if r.APIReader == nil {
		r.APIReader = mgr.GetAPIReader()
	}
	c, err := ctrl.NewControllerManagedBy(mgr).
		Named("analyticspipeline").
		// Reconciles wait on the API server most of the time: a reconcile's applies go one after
		// another, so the workers are what keeps requests in flight (docs/performance.md; the
		// manager's --pipeline-workers).
		WithOptions(controller.Options{MaxConcurrentReconciles: cmp.Or(r.Workers, DefaultPipelineWorkers)}).
		// autoscalingWritten: the autoscaling controller wrote new targets or a new condition
		// (autoscaling_status.go).
		For(&v1alpha1.AnalyticsPipeline{}, builder.WithPredicates(predicate.Or[client.Object](
			predicate.GenerationChangedPredicate{}, predicate.LabelChangedPredicate{}, autoscalingWritten))).
		Watches(&v1alpha1.StorageTier{}, handler.EnqueueRequestsFromMapFunc(r.pipelinesNaming)).
		// The pipelines' pods, as the manager caches them (ManagerOptions): a pod turning
		// unschedulable, or scheduled, reports itself on its pipeline.
		Watches(&corev1.Pod{}, handler.EnqueueRequestsFromMapFunc(pipelineOfPod),
			builder.WithPredicates(schedulingChanged)).
		Watches(&apiextensionsv1.CustomResourceDefinition{}, handler.EnqueueRequestsFromMapFunc(r.allPipelines),
			builder.OnlyMetadata, builder.WithPredicates(predicate.NewPredicateFuncs(func(o client.Object) bool {
				return upstream[o.GetName()]
			}))).
		Build(r.Instruments.Wrap("analyticspipeline", r))
	if err != nil {
		return err
	}
	r.watches = &childWatches{controller: c, cache: mgr.GetCache(), scheme: mgr.GetScheme(),
		mapper: mgr.GetRESTMapper(), watched: map[schema.GroupVersionKind]bool{}}
	return nil
}

// podPipelineIndex indexes the cached pods by the pipeline their label names: every reconcile
// reads its pipeline's pods (reportPods), and a label selector alone scans every pipeline pod
// of the namespace, some twenty per pipeline.
const podPipelineIndex = "strata.dev/pipeline"

func podPipeline(o client.Object) []string {
	if name := o.GetLabels()[desired.LabelPipeline]; name != "" {
		return []string{name}
	}
	return nil
}

// tierIndex indexes pipelines by the tiers they name, so a tier event finds its pipelines
// without listing all of them.
const tierIndex = "strata.dev/tiers"

func indexTiers(o client.Object) []string {
	return tierNames(o.(*v1alpha1.AnalyticsPipeline))
}

// pipelinesNaming maps a tier to the pipelines that name it.
func (r *Reconciler) pipelinesNaming(ctx context.Context, tier client.Object) []reconcile.Request {
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
func (r *Reconciler) allPipelines(ctx context.Context, _ client.Object) []reconcile.Request {
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
