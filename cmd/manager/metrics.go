package main

import (
	"github.com/prometheus/client_golang/prometheus"

	autoscaleprom "github.com/strata-dev/strata/internal/autoscale/prometheus"
	pipelinemetrics "github.com/strata-dev/strata/internal/metrics"
)

// registerMetrics puts the pipeline metrics (rec, the controllers' pipelinemetrics.Default) and
// the autoscaler's decisions counter on reg (controller-runtime's registry, which the metrics
// endpoint serves) and has rec's Forget remove a deleted pipeline's decisions with its other
// series. main calls it once per process: client_golang refuses a second registration, and
// the forget hook used to be installed twice, from two init functions (internal/metrics and
// controllers), each deleting the same series again. Nothing registers at package load, so
// this is the one place the manager's own metrics are put on its endpoint.
func registerMetrics(reg prometheus.Registerer, rec *pipelinemetrics.Recorder) error {
	if err := rec.Register(reg); err != nil {
		return err
	}
	if err := autoscaleprom.Register(reg); err != nil {
		return err
	}
	rec.ForgetAlso(autoscaleprom.Decisions)
	return nil
}
