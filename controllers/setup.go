package controllers

import (
	"context"

	ctrl "sigs.k8s.io/controller-runtime"
)

// FieldOwner is the server-side apply field manager of everything the operator writes.
const FieldOwner = "strata"

// Option changes how Setup builds the controllers.
type Option func(*PipelineReconciler)

// WithAutoscaler gives the pipeline reconciler an Autoscaler of its own: tests read metrics
// from a fake source on a clock of their own.
func WithAutoscaler(a *Autoscaler) Option {
	return func(r *PipelineReconciler) { r.Autoscaler = a }
}

// Setup registers every Strata controller with the manager.
func Setup(ctx context.Context, mgr ctrl.Manager, opts ...Option) error {
	pipelines := &PipelineReconciler{
		Client:   mgr.GetClient(),
		Recorder: mgr.GetEventRecorder("strata-pipeline"),
		Mapper:   mgr.GetRESTMapper(),
	}
	for _, o := range opts {
		o(pipelines)
	}
	if err := pipelines.SetupWithManager(ctx, mgr); err != nil {
		return err
	}
	tiers := &TierReconciler{Client: mgr.GetClient(), Recorder: mgr.GetEventRecorder("strata-tier")}
	return tiers.SetupWithManager(ctx, mgr)
}
