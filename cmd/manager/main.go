// Command manager runs the Strata operator: the AnalyticsPipeline, StorageTier and autoscaling
// controllers, with leader election, health probes and an authenticated metrics endpoint.
package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"regexp"
	"strings"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/controllers"
	autoscaleprom "github.com/strata-dev/strata/internal/autoscale/prometheus"
	"github.com/strata-dev/strata/internal/desired"
	pipelinemetrics "github.com/strata-dev/strata/internal/metrics"
)

// options are the manager's flags.
type options struct {
	metricsAddr, probeAddr, watchNamespaces, leaderNamespace string
	metricsCertDir, ingestImage, pprofAddr                   string
	leaderElect, secureMetrics, enableHTTP2                  bool
	qps                                                      float64
	burst, pipelineWorkers                                   int
	// The autoscaler's access to Prometheus (autoscaleprom.Access).
	promAllowed                        stringList
	promTokenFile, promCAFile          string
	promQueryTimeout, promReadDeadline time.Duration
	// How local tiers wipe their Released volumes (controllers.VolumeRecycling).
	cleanupNamespace, cleanupImage string
	cleanupTimeout                 time.Duration
	userServiceAccounts            bool
	upstreamStatusTimeout          time.Duration
	// The leader election's timings (controller-runtime's LeaseDuration, RenewDeadline,
	// RetryPeriod); docs/standby.md measures what they cost in a failover.
	leaseDuration, renewDeadline, retryPeriod time.Duration
	// memoryTarget is the resident set the Go runtime's soft limit aims for (memlimit.go).
	memoryTarget quantityFlag
}

// stringList is a repeatable flag.
type stringList []string

func (l *stringList) String() string     { return strings.Join(*l, ",") }
func (l *stringList) Set(v string) error { *l = append(*l, v); return nil }

// access is the autoscaler's Prometheus access policy from the flags: link-local addresses and
// the API server's service address ($KUBERNETES_SERVICE_HOST) are always refused.
func (o *options) access() (autoscaleprom.Access, error) {
	a := autoscaleprom.DefaultAccess(os.Getenv("KUBERNETES_SERVICE_HOST"))
	for _, pattern := range o.promAllowed {
		re, err := regexp.Compile("^(?:" + pattern + ")$")
		if err != nil {
			return a, fmt.Errorf("--prometheus-allowed-url %q: %w", pattern, err)
		}
		a.Allowed = append(a.Allowed, re)
	}
	a.BearerTokenFile, a.CAFile = o.promTokenFile, o.promCAFile
	a.QueryTimeout, a.Deadline = o.promQueryTimeout, o.promReadDeadline
	return a, nil
}

func (o *options) bind(fs *flag.FlagSet) {
	fs.StringVar(&o.metricsAddr, "metrics-bind-address", ":8443", "Address the metrics endpoint binds to (\"0\" disables it).")
	fs.BoolVar(&o.secureMetrics, "metrics-secure", true, "Serve metrics over HTTPS, authenticated and authorized by the API server.")
	fs.StringVar(&o.probeAddr, "health-probe-bind-address", ":8081", "Address the health and readiness probes bind to.")
	fs.BoolVar(&o.leaderElect, "leader-elect", false, "Elect a leader, so that only one replica reconciles at a time.")
	fs.StringVar(&o.leaderNamespace, "leader-election-namespace", "", "Namespace of the leader election lease (default: the pod's namespace).")
	fs.DurationVar(&o.leaseDuration, "leader-elect-lease-duration", 15*time.Second, "How long a standby waits, from the last renewal it saw, before it takes an unrenewed lease over: the longest a failover waits for a dead leader.")
	fs.DurationVar(&o.renewDeadline, "leader-elect-renew-deadline", 10*time.Second, "How long the leader keeps trying to renew its lease before it gives up and exits (less than the lease duration).")
	fs.DurationVar(&o.retryPeriod, "leader-elect-retry-period", 2*time.Second, "How often the leader renews its lease and a standby tries to take it (the renew deadline must exceed 1.2 times it).")
	fs.StringVar(&o.watchNamespaces, "watch-namespaces", "", "Comma-separated namespaces whose pipelines to reconcile (default: all).")
	fs.Float64Var(&o.qps, "kube-api-qps", 0, "Requests per second the operator may send to the API server (0: no client-side limit; the API server's priority and fairness throttles, controller-runtime's default).")
	fs.IntVar(&o.burst, "kube-api-burst", 100, "Burst of requests the operator may send to the API server, with --kube-api-qps.")
	fs.IntVar(&o.pipelineWorkers, "pipeline-workers", controllers.DefaultPipelineWorkers, "How many pipelines are reconciled at once.")
	fs.StringVar(&o.metricsCertDir, "metrics-cert-dir", "", "Directory holding the metrics endpoint's serving certificate (tls.crt, tls.key), reloaded when it changes; empty: a self-signed certificate, which scrapers cannot verify.")
	fs.StringVar(&o.pprofAddr, "pprof-bind-address", "", "Address a net/http/pprof endpoint binds to, for profiling the operator (default: none; it is unauthenticated, so bind it to loopback).")
	fs.BoolVar(&o.enableHTTP2, "enable-http2", false, "Serve metrics over HTTP/2 (off by default: HTTP/2 rapid-reset CVEs).")
	fs.Var(&o.promAllowed, "prometheus-allowed-url", "A regular expression a pipeline's spec.autoscaling.prometheusURL must match, whole (repeatable; default: any http(s) URL that is not link-local or the API server).")
	fs.StringVar(&o.promTokenFile, "prometheus-bearer-token-file", "", "A file holding the bearer token the autoscaler sends to Prometheus (read for every connection; mount it from a Secret).")
	fs.StringVar(&o.promCAFile, "prometheus-ca-file", "", "A file holding the CA certificates that verify Prometheus' TLS certificate (mount it from a Secret or ConfigMap).")
	fs.DurationVar(&o.promQueryTimeout, "prometheus-query-timeout", 2*time.Second, "How long one autoscaler query to Prometheus may take.")
	fs.StringVar(&o.cleanupNamespace, "volume-cleanup-namespace", "", "Namespace of the pods that wipe Released local volumes; it must admit hostPath volumes (default: the operator's namespace).")
	fs.StringVar(&o.cleanupImage, "volume-cleanup-image", controllers.DefaultCleanupImage, "Image of the pods that wipe Released local volumes (needs /bin/sh, rm and ls).")
	fs.DurationVar(&o.cleanupTimeout, "volume-cleanup-timeout", 15*time.Minute, "How long wiping one Released local volume may take before it is retried.")
	fs.StringVar(&o.ingestImage, "ingest-image", desired.DefaultIngestImage, "The image of Strata's ingestion job, for pipelines whose spec.spark names no image.")
	fs.DurationVar(&o.promReadDeadline, "prometheus-read-deadline", 10*time.Second, "How long reading all of one pipeline's signals may take.")
	fs.DurationVar(&o.upstreamStatusTimeout, "upstream-status-timeout", controllers.DefaultUpstreamStatusTimeout, "How long a pipeline's Kafka, SparkApplication or Elasticsearch may go without any status from its operator before the pipeline reports it NotReconciled, naming the operator and the namespace it must watch (0: never).")
	o.memoryTarget.q = resource.MustParse(DefaultMemoryTarget)
	fs.Var(&o.memoryTarget, "memory-target", "The resident memory the manager keeps to by collecting garbage more often when its heap nears it, never with less than a quarter of the live heap to grow (0: Go's default collector; GOMEMLIMIT set in the environment overrides it; 90 % of a container's memory limit caps it).")
	fs.BoolVar(&o.userServiceAccounts, "allow-user-service-accounts", false, "Let a pipeline's spec.spark.serviceAccountName run its Spark driver as a ServiceAccount of the user's choosing (default: refused; each driver gets a ServiceAccount of its pipeline's own).")
}

func main() {
	var o options
	o.bind(flag.CommandLine)
	zopts := zap.Options{}
	zopts.BindFlags(flag.CommandLine)
	flag.Parse()
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&zopts)))
	if err := registerMetrics(crmetrics.Registry, pipelinemetrics.Default); err != nil {
		ctrl.Log.WithName("setup").Error(err, "registering the autoscaler's metrics")
		os.Exit(1)
	}
	if m := newMemoryTarget(o.memoryTarget.q.Value()); m != nil {
		m.start()
		ctrl.Log.WithName("setup").Info("Go soft memory limit kept to the memory target", "target", o.memoryTarget.String(),
			"containerSoftLimit", m.cgroup, "limit", m.limit.Load())
	}

	ctx := ctrl.SetupSignalHandler()
	if err := run(ctx, ctrl.GetConfigOrDie(), o); err != nil {
		ctrl.Log.WithName("setup").Error(err, "the manager stopped with an error")
		os.Exit(1)
	}
}

// The manager's own RBAC, beside the controllers' (controllers/*.go). Leader election takes a
// Lease and records core Events in its own namespace: these rules become a Role, whose namespace
// here (strata-system) is a placeholder the Helm chart replaces with the release's namespace. The
// metrics endpoint asks the API server to authenticate (TokenReview) and authorize
// (SubjectAccessReview) every scraper.
// +kubebuilder:rbac:groups=coordination.k8s.io,namespace=strata-system,resources=leases,verbs=get;create;update
// +kubebuilder:rbac:groups="",namespace=strata-system,resources=events,verbs=create;patch
// +kubebuilder:rbac:groups=authentication.k8s.io,resources=tokenreviews,verbs=create
// +kubebuilder:rbac:groups=authorization.k8s.io,resources=subjectaccessreviews,verbs=create

// positive is d, or nil (controller-runtime's default) when d is not set.
func positive(d time.Duration) *time.Duration {
	if d <= 0 {
		return nil
	}
	return &d
}

// leaderElectionID names the leader election's Lease.
const leaderElectionID = "strata.strata.dev"

// run builds the manager and runs it until ctx ends.
func run(ctx context.Context, cfg *rest.Config, o options) error {
	log := ctrl.Log.WithName("setup")
	// Without --kube-api-qps the config keeps controller-runtime's: no client-side rate limit
	// (pkg/client/config/config.go, GetConfigWithContext: QPS -1, "we can rely on API priority
	// and fairness"). A limit of 50 capped 1,000 pipelines' creation at 50 requests/s on an API
	// server that took more (docs/performance.md).
	if o.qps > 0 {
		cfg = rest.CopyConfig(cfg)
		cfg.QPS, cfg.Burst = float32(o.qps), o.burst
	}
	scheme := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(apiextensionsv1.AddToScheme(scheme))
	utilruntime.Must(v1alpha1.AddToScheme(scheme))

	var tlsOpts []func(*tls.Config)
	if !o.enableHTTP2 {
		tlsOpts = append(tlsOpts, func(c *tls.Config) { c.NextProtos = []string{"http/1.1"} })
	}
	metrics := metricsserver.Options{BindAddress: o.metricsAddr, SecureServing: o.secureMetrics, TLSOpts: tlsOpts,
		// The Helm chart mounts a certificate its CA (or cert-manager's) signed, so that
		// Prometheus verifies the endpoint before it sends its ServiceAccount token.
		CertDir: o.metricsCertDir, CertName: "tls.crt", KeyName: "tls.key"}
	// The pipeline metrics follow the registry's; with secure serving, only callers the API
	// server authenticates and authorizes (get on /metrics) may read.
	metrics.FilterProvider = metricsFilter(o.secureMetrics, pipelinemetrics.Default)
	cacheOpts := cache.Options{}
	if o.watchNamespaces != "" {
		cacheOpts.DefaultNamespaces = map[string]cache.Config{}
		for _, ns := range strings.Split(o.watchNamespaces, ",") {
			cacheOpts.DefaultNamespaces[strings.TrimSpace(ns)] = cache.Config{}
		}
	}
	// With leader election, the lease lock is fenced (fence.go): the manager's writes stop as soon
	// as its lease may have passed to a standby, not only when its elector gives up.
	var lock resourcelock.Interface
	if o.leaderElect {
		deadline := o.renewDeadline
		if deadline <= 0 {
			deadline = 10 * time.Second // controller-runtime's default RenewDeadline
		}
		l, err := leaseLock(cfg, o.leaderNamespace, leaderElectionID, deadline, scheme)
		if err != nil {
			return err
		}
		f := newFence(l, deadline)
		lock = f
		cfg = rest.CopyConfig(cfg)
		cfg.Wrap(f.wrap)
	}
	mgr, err := ctrl.NewManager(cfg, controllers.ManagerOptions(ctrl.Options{
		Scheme:                  scheme,
		Metrics:                 metrics,
		HealthProbeBindAddress:  o.probeAddr,
		LeaderElection:          o.leaderElect,
		LeaderElectionID:        leaderElectionID,
		LeaderElectionNamespace: o.leaderNamespace,
		// When set, controller-runtime uses this lock (and still the timings below).
		LeaderElectionResourceLockInterface: lock,
		LeaderElectionReleaseOnCancel:       true,
		LeaseDuration:                       positive(o.leaseDuration),
		RenewDeadline:                       positive(o.renewDeadline),
		RetryPeriod:                         positive(o.retryPeriod),
		Cache:                               cacheOpts,
		PprofBindAddress:                    o.pprofAddr,
	}))
	if err != nil {
		return err
	}
	access, err := o.access()
	if err != nil {
		return err
	}
	recycling := controllers.VolumeRecycling{Namespace: o.cleanupNamespace, Image: o.cleanupImage, Timeout: o.cleanupTimeout}
	if err := controllers.Setup(ctx, mgr, controllers.WithPrometheusAccess(access), controllers.WithVolumeRecycling(recycling),
		controllers.WithIngestImage(o.ingestImage), controllers.WithPipelineWorkers(o.pipelineWorkers),
		controllers.WithUserServiceAccounts(o.userServiceAccounts),
		controllers.WithUpstreamStatusTimeout(o.upstreamStatusTimeout)); err != nil {
		return err
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return err
	}
	// Ready once the caches have synced: before that a replica cannot reconcile.
	if err := mgr.AddReadyzCheck("readyz", func(r *http.Request) error {
		ctx, cancel := context.WithTimeout(r.Context(), time.Second)
		defer cancel()
		if !mgr.GetCache().WaitForCacheSync(ctx) {
			return errors.New("caches not synced")
		}
		return nil
	}); err != nil {
		return err
	}
	if lock != nil {
		// The Lease's holderIdentity while this replica leads.
		log.Info("leader election", "identity", lock.Identity(), "lease", o.leaderNamespace+"/"+leaderElectionID)
	}
	log.Info("starting the manager", "watchNamespaces", o.watchNamespaces, "leaderElection", o.leaderElect,
		"leaseDuration", o.leaseDuration, "renewDeadline", o.renewDeadline, "retryPeriod", o.retryPeriod)
	return mgr.Start(ctx)
}
