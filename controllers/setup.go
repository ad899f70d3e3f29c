package controllers

import (
	"context"
	"time"

	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	autoscaleprom "github.com/strata-dev/strata/internal/autoscale/prometheus"
	"github.com/strata-dev/strata/internal/ssa"
)

// FieldOwner is the server-side apply field manager of everything the operator writes.
const FieldOwner = "strata"

// Option changes how Setup builds the controllers.
type Option func(*reconcilers)

// reconcilers are the controllers Setup builds, which options change.
type reconcilers struct {
	pipelines *PipelineReconciler
	tiers     *TierReconciler
}

// WithAutoscaler gives the pipeline reconciler an Autoscaler of its own: tests read metrics
// from a fake source on a clock of their own.
func WithAutoscaler(a *Autoscaler) Option {
	return func(rs *reconcilers) { rs.pipelines.Autoscaler = a }
}

// WithVolumeRecycling sets how local tiers wipe their Released volumes (the manager's flags).
func WithVolumeRecycling(v VolumeRecycling) Option {
	return func(rs *reconcilers) { rs.tiers.Recycling = v }
}

// WithPrometheusAccess sets how the autoscaler may reach Prometheus (the manager's flags).
func WithPrometheusAccess(a autoscaleprom.Access) Option {
	return func(rs *reconcilers) {
		r := rs.pipelines
		if r.Autoscaler == nil {
			r.Autoscaler = &Autoscaler{}
		}
		r.Autoscaler.Access = a
	}
}

// WithIngestImage sets the image of Strata's ingestion job (the manager's --ingest-image).
func WithIngestImage(image string) Option {
	return func(rs *reconcilers) { rs.pipelines.IngestImage = image }
}

// WithUserServiceAccounts lets pipelines run their Spark driver as a ServiceAccount of their
// own choosing (spec.spark.serviceAccountName); the manager's --allow-user-service-accounts.
func WithUserServiceAccounts(allow bool) Option {
	return func(rs *reconcilers) { rs.pipelines.AllowUserServiceAccounts = allow }
}

// WithUpstreamStatusTimeout sets how long a child may go without a status from its operator
// before the pipeline reports it NotReconciled (the manager's --upstream-status-timeout; 0
// never does).
func WithUpstreamStatusTimeout(d time.Duration) Option {
	return func(rs *reconcilers) { rs.pipelines.UpstreamStatusTimeout = d }
}

// WithPipelineWorkers sets how many pipelines are reconciled at once (the manager's
// --pipeline-workers; 0: DefaultPipelineWorkers).
func WithPipelineWorkers(n int) Option {
	return func(rs *reconcilers) { rs.pipelines.Workers = n }
}

// Instruments let tests watch the controllers work: every reconciler and event recorder passes
// through them once, at setup, so that a test can wait on a finished reconcile and see what it
// read, wrote and recorded, instead of sleeping and hoping nothing came late. Production has none.
type Instruments struct {
	Reconciler func(controller string, r reconcile.Reconciler) reconcile.Reconciler
	Recorder   func(r events.EventRecorder) events.EventRecorder
}

// WithInstruments sets the instruments of every controller.
func WithInstruments(i Instruments) Option {
	return func(rs *reconcilers) { rs.pipelines.instruments, rs.tiers.instruments = i, i }
}

// reconciler is r as the instruments see it.
func (i Instruments) reconciler(controller string, r reconcile.Reconciler) reconcile.Reconciler {
	if i.Reconciler == nil {
		return r
	}
	return i.Reconciler(controller, r)
}

// recorder is rec as the instruments see it.
func (i Instruments) recorder(rec events.EventRecorder) events.EventRecorder {
	if i.Recorder == nil || rec == nil {
		return rec
	}
	return i.Recorder(rec)
}

// Setup registers every Strata controller with the manager.
func Setup(ctx context.Context, mgr ctrl.Manager, opts ...Option) error {
	// One server-side-apply path, and one bounded cache of what it applied, for every controller.
	applier := ssa.New(mgr.GetClient(), FieldOwner, ssa.DefaultCacheSize)
	pipelines := &PipelineReconciler{
		Client:   mgr.GetClient(),
		Recorder: mgr.GetEventRecorder("strata-pipeline"),
		Mapper:   mgr.GetRESTMapper(),
		Applier:  applier,

		UpstreamStatusTimeout: DefaultUpstreamStatusTimeout,
	}
	tiers := &TierReconciler{Client: mgr.GetClient(), Recorder: mgr.GetEventRecorder("strata-tier"), Applier: applier}
	for _, o := range opts {
		o(&reconcilers{pipelines: pipelines, tiers: tiers})
	}
	pipelines.Recorder = pipelines.instruments.recorder(pipelines.Recorder)
	tiers.Recorder = tiers.instruments.recorder(tiers.Recorder)
	if pipelines.Autoscaler == nil {
		// Made here, before any worker runs: the workers share it.
		pipelines.Autoscaler = &Autoscaler{Access: autoscaleprom.DefaultAccess()}
	}
	if err := pipelines.SetupWithManager(ctx, mgr); err != nil {
		return err
	}
	autoscaling := &AutoscalingReconciler{Pipelines: pipelines, Autoscaler: pipelines.Autoscaler}
	if err := autoscaling.SetupWithManager(mgr); err != nil {
		return err
	}
	return tiers.SetupWithManager(ctx, mgr)
}
