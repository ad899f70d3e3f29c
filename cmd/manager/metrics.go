package main

import (
	"net/http"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	autoscaleprom "github.com/strata-dev/strata/internal/autoscale/prometheus"
	pipelinemetrics "github.com/strata-dev/strata/internal/metrics"
)

// registerMetrics puts the autoscaler's decisions counter on reg (controller-runtime's registry,
// which the metrics endpoint serves) and has rec's Forget (the controllers'
// pipelinemetrics.Default) remove a deleted pipeline's decisions with its other series. The
// pipeline metrics themselves are not registered: the endpoint writes them after the registry's
// as it reads them (metricsFilter), without gathering 50,000 series at once. main calls it once
// per process: client_golang refuses a second registration, and the forget hook used to be
// installed twice, from two init functions (internal/metrics and controllers), each deleting
// the same series again. Nothing registers at package load.
func registerMetrics(reg prometheus.Registerer, rec *pipelinemetrics.Recorder) error {
	if err := autoscaleprom.Register(reg); err != nil {
		return err
	}
	rec.ForgetAlso(autoscaleprom.Decisions)
	return nil
}

// metricsFilter is the metrics server's FilterProvider: /metrics serves controller-runtime's
// registry followed by rec's pipeline metrics (Recorder.Handler), and with secure serving only
// to callers the API server authenticates and authorizes (get on /metrics). controller-runtime
// serves /metrics through this filter only (pkg/metrics/server/server.go: ExtraHandlers may
// not take the path, and the filter is the one hook around its handler).
func metricsFilter(secure bool, rec *pipelinemetrics.Recorder) func(*rest.Config, *http.Client) (metricsserver.Filter, error) {
	return func(cfg *rest.Config, hc *http.Client) (metricsserver.Filter, error) {
		var auth metricsserver.Filter
		if secure {
			var err error
			if auth, err = filters.WithAuthenticationAndAuthorization(cfg, hc); err != nil {
				return nil, err
			}
		}
		return func(log logr.Logger, h http.Handler) (http.Handler, error) {
			h = rec.Handler("/metrics", h)
			if auth == nil {
				return h, nil
			}
			return auth(log, h)
		}, nil
	}
}
