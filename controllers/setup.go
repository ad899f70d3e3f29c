package controllers

import (
	"context"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/strata-dev/strata/controllers/autoscaling"
	"github.com/strata-dev/strata/controllers/internal/setup"
	"github.com/strata-dev/strata/controllers/pipeline"
	"github.com/strata-dev/strata/controllers/tier"
	autoscaleprom "github.com/strata-dev/strata/internal/autoscale/prometheus"
	"github.com/strata-dev/strata/internal/ssa"
)

// FieldOwner is the server-side apply field manager of everything the operator writes.
const FieldOwner = setup.FieldOwner

// The manager's defaults, named where cmd/manager's flags take them.
const (
	DefaultPipelineWorkers       = pipeline.DefaultPipelineWorkers
	DefaultUpstreamStatusTimeout = pipeline.DefaultUpstreamStatusTimeout
	DefaultCleanupImage          = tier.DefaultCleanupImage
)

// VolumeRecycling says how local tiers wipe their Released volumes (controllers/tier).
type VolumeRecycling = tier.VolumeRecycling

// Autoscaler is the autoscaling controller's link to the pipelines' metrics (controllers/autoscaling).
type Autoscaler = autoscaling.Autoscaler

// Instruments let tests watch the controllers work (controllers/internal/setup).
type Instruments = setup.Instruments

// Option changes how Setup builds the controllers.
type Option func(*reconcilers)

// reconcilers are the controllers Setup builds, which options change.
type reconcilers struct {
	pipelines   *pipeline.Reconciler
	tiers       *tier.Reconciler
	autoscaling *autoscaling.Reconciler
}

// WithAutoscaler gives the autoscaling controller an Autoscaler of its own: tests read metrics
// from a fake source on a clock of their own.
func WithAutoscaler(a *Autoscaler) Option {
	return func(rs *reconcilers) { rs.autoscaling.Autoscaler = a }
}

// WithVolumeRecycling sets how local tiers wipe their Released volumes (the manager's flags).
func WithVolumeRecycling(v VolumeRecycling) Option {
	return func(rs *reconcilers) { rs.tiers.Recycling = v }
}

// WithPrometheusAccess sets how the autoscaler may reach Prometheus (the manager's flags).
func WithPrometheusAccess(a autoscaleprom.Access) Option {
	return func(rs *reconcilers) {
		r := rs.autoscaling
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

// WithInstruments sets the instruments of every controller.
func WithInstruments(i Instruments) Option {
	return func(rs *reconcilers) {
		rs.pipelines.Instruments, rs.tiers.Instruments, rs.autoscaling.Instruments = i, i, i
	}
}

// Setup registers every Strata controller with the manager: the pipeline controller
// (controllers/pipeline), the autoscaling controller (controllers/autoscaling), which reads the
// cluster through the pipeline controller's caches, and the storage tier controller
// (controllers/tier).
func Setup(ctx context.Context, mgr ctrl.Manager, opts ...Option) error {
	// One server-side-apply path, and one bounded cache of what it applied, for every controller.
	applier := ssa.New(mgr.GetClient(), FieldOwner, ssa.DefaultCacheSize)
	pipelines := &pipeline.Reconciler{
		Client:   mgr.GetClient(),
		Recorder: mgr.GetEventRecorder("strata-pipeline"),
		Mapper:   mgr.GetRESTMapper(),
		Applier:  applier,

		UpstreamStatusTimeout: DefaultUpstreamStatusTimeout,
	}
	tiers := &tier.Reconciler{Client: mgr.GetClient(), Recorder: mgr.GetEventRecorder("strata-tier"), Applier: applier}
	autoscaler := &autoscaling.Reconciler{Client: mgr.GetClient(), Cluster: pipelines}
	for _, o := range opts {
		o(&reconcilers{pipelines: pipelines, tiers: tiers, autoscaling: autoscaler})
	}
	pipelines.Recorder = pipelines.Instruments.WrapRecorder(pipelines.Recorder)
	tiers.Recorder = tiers.Instruments.WrapRecorder(tiers.Recorder)
	// The autoscaler's decisions and its condition are announced on the pipeline, under the
	// pipeline controller's name, as they were when the two were one.
	autoscaler.Recorder = pipelines.Recorder
	if autoscaler.Autoscaler == nil {
		// Made here, before any worker runs: the workers share it.
		autoscaler.Autoscaler = &Autoscaler{Access: autoscaleprom.DefaultAccess()}
	}
	if err := pipelines.SetupWithManager(ctx, mgr); err != nil {
		return err
	}
	if err := autoscaler.SetupWithManager(mgr); err != nil {
		return err
	}
	return tiers.SetupWithManager(ctx, mgr)
}
