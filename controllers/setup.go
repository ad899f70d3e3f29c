package controllers

import (
	"context"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/event"

	"github.com/strata-dev/strata/internal/autoscale"
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
func WithPrometheusAccess(a autoscale.Access) Option {
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

// Setup registers every Strata controller with the manager.
func Setup(ctx context.Context, mgr ctrl.Manager, opts ...Option) error {
	// One server-side-apply path, and one bounded cache of what it applied, for every controller.
	applier := ssa.New(mgr.GetClient(), FieldOwner, ssa.DefaultCacheSize)
	pipelines := &PipelineReconciler{
		Client:   mgr.GetClient(),
		Recorder: mgr.GetEventRecorder("strata-pipeline"),
		Mapper:   mgr.GetRESTMapper(),
		Applier:  applier,
	}
	tiers := &TierReconciler{Client: mgr.GetClient(), Recorder: mgr.GetEventRecorder("strata-tier"), Applier: applier}
	for _, o := range opts {
		o(&reconcilers{pipelines: pipelines, tiers: tiers})
	}
	if pipelines.Autoscaler == nil {
		// Made here, before any worker runs: the workers share it.
		pipelines.Autoscaler = &Autoscaler{Access: autoscale.DefaultAccess()}
	}
	readings := make(chan event.GenericEvent, 64)
	pipelines.readings = readings
	if err := pipelines.SetupWithManager(ctx, mgr); err != nil {
		return err
	}
	autoscaling := &AutoscalingReconciler{Pipelines: pipelines, Autoscaler: pipelines.Autoscaler, wake: readings}
	if err := autoscaling.SetupWithManager(mgr); err != nil {
		return err
	}
	return tiers.SetupWithManager(ctx, mgr)
}
