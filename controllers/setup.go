package controllers

import (
	"context"

	ctrl "sigs.k8s.io/controller-runtime"
)

// FieldOwner is the server-side apply field manager of everything the operator writes.
const FieldOwner = "strata"

// Setup registers every Strata controller with the manager.
func Setup(ctx context.Context, mgr ctrl.Manager) error {
	pipelines := &PipelineReconciler{
		Client:   mgr.GetClient(),
		Recorder: mgr.GetEventRecorder("strata-pipeline"),
		Mapper:   mgr.GetRESTMapper(),
	}
	if err := pipelines.SetupWithManager(ctx, mgr); err != nil {
		return err
	}
	tiers := &TierReconciler{Client: mgr.GetClient(), Recorder: mgr.GetEventRecorder("strata-tier")}
	return tiers.SetupWithManager(ctx, mgr)
}
