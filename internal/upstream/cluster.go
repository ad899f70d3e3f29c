package upstream

import (
	"context"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/strata-dev/strata/internal/controlplane"
	"github.com/strata-dev/strata/internal/lab"
	"github.com/strata-dev/strata/internal/testutil"
	"github.com/strata-dev/strata/internal/testutil/proc"
)

// EnvLogs names a directory to keep the components' logs in (else they go with the test's
// temporary directory, their last 4 KiB printed when it fails).
const EnvLogs = "STRATA_UPSTREAM_LOGS"

// UpstreamStatusTimeout is the operator's --upstream-status-timeout in the harness.
const UpstreamStatusTimeout = 20 * time.Second

// Cluster is a control plane with the upstream controllers and Strata's operator running on it.
type Cluster struct {
	// Client is a cluster admin's, and Config its connection.
	Client client.Client
	Config *rest.Config
	// Operator is Strata's manager, run as the chart's ServiceAccount.
	Operator *lab.Operator
	// Strimzi is true when Strimzi's cluster operator runs (its build is present).
	Strimzi bool
	// Dir holds every component's log (<name>.log) and the admin kubeconfig.
	Dir string

	components []*proc.Process
	// nodes are the nodes the harness registered at its start (Options.Nodes).
	nodes []Node
	// env is the control plane, for the API server's faults (faults.go).
	env *controlplane.Env
}

// Options say what runs besides the control plane, the scheduler, the controller-manager and KWOK.
type Options struct {
	// Nodes are the KWOK nodes (DefaultNodes when empty).
	Nodes []Node
	// JobNamespaces are the namespaces the Spark operator watches (its chart's
	// spark.jobNamespaces; default: default).
	JobNamespaces []string
	// Fixtures are created before the operator starts (StorageTiers, say).
	Fixtures []client.Object
	// WithoutStrimzi leaves Strimzi's cluster operator out even when its build is present, for a
	// test that needs none of Kafka's pods. Its health server's port is fixed (8080:
	// strimzi-kafka-operator 1.2.0, cluster-operator/src/main/java/io/strimzi/operator/cluster/
	// Main.java, HEALTH_SERVER_PORT), so only one harness on a machine can run it at a time.
	WithoutStrimzi bool
	// WithoutStrata starts neither Strata's CRDs nor its operator: the test installs a release
	// of its own (the upgrade test: the previous release's chart, then the working tree's), with
	// HarnessChart's arguments.
	WithoutStrata bool
}

// Start starts the harness: kube-apiserver and etcd with Strata's and the upstream CRDs,
// kube-controller-manager, kube-scheduler, KWOK and its nodes, the cluster's StorageClasses and
// their provisioner, ECK and the Spark operator with their webhooks, and Strata's operator.
// Everything stops when the test ends.
func Start(t testing.TB, opts Options) *Cluster {
	t.Helper()
	// envtest's CRD installer logs through controller-runtime's logger, which complains when
	// nothing was set; the components' own logs are what a failure needs.
	logf.SetLogger(logr.Discard())
	if len(opts.Nodes) == 0 {
		opts.Nodes = DefaultNodes()
	}
	if len(opts.JobNamespaces) == 0 {
		opts.JobNamespaces = []string{"default"}
	}
	dir := t.TempDir()
	if keep := os.Getenv(EnvLogs); keep != "" {
		// Kept after the test: every component's whole log, for a failure's post-mortem.
		dir = filepath.Join(keep, strings.ReplaceAll(t.Name(), "/", "_"))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		t.Logf("components' logs in %s", dir)
	}
	var cpOpts []controlplane.Option
	if opts.WithoutStrata {
		cpOpts = append(cpOpts, controlplane.WithoutStrataCRDs())
	}
	env, c := testutil.ControlPlane(t, cpOpts...)
	// Registered after the control plane's cleanup, so it runs before: the harness's own loops
	// stop before the API server does.
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	kc := filepath.Join(dir, "admin.kubeconfig")
	if err := os.WriteFile(kc, env.KubeConfig, 0o600); err != nil {
		t.Fatal(err)
	}
	caFile := filepath.Join(dir, "ca.crt")
	if err := os.WriteFile(caFile, env.Config.CAData, 0o600); err != nil {
		t.Fatal(err)
	}
	h := &Cluster{Client: c, Config: env.Config, Dir: dir, env: env, nodes: opts.Nodes}
	h.components = append(h.components,
		startControllerManager(t, dir, kc, env.CertDir(), caFile),
		startScheduler(t, dir, kc),
		startKWOK(t, dir, kc))
	createNodes(ctx, t, c, opts.Nodes)
	for _, sc := range storageClasses() {
		if err := c.Create(ctx, sc); err != nil {
			t.Fatal(err)
		}
	}
	go provision(ctx, t, c, 500*time.Millisecond)

	api, err := url.Parse(env.Config.Host)
	if err != nil {
		t.Fatal(err)
	}
	h.components = append(h.components, startECK(ctx, t, dir, kc, env.Config, c))
	if build := StrimziBuild(t); build != "" && !opts.WithoutStrimzi {
		h.Strimzi = true
		h.components = append(h.components, startStrimzi(ctx, t, dir, build, env.Config, c, opts.JobNamespaces))
	} else if !opts.WithoutStrimzi {
		t.Logf("Strimzi's cluster operator not run: no build in bin/ (hack/strimzi.sh makes one; it needs the internet) "+
			"and %s unset; Kafka objects are only checked against Strimzi's CRDs", EnvStrimzi)
	}
	ctrl, hook := startSparkOperator(ctx, t, dir, env.Config, api, c, opts.JobNamespaces...)
	h.components = append(h.components, ctrl, hook)
	if opts.WithoutStrata {
		h.Alive(t)
		return h
	}
	h.Operator = lab.RunOperator(t, dir, HarnessChart(lab.RenderChart(t, "strata", "strata-system")), env.Config, c, opts.Fixtures...)
	h.Alive(t)
	return h
}

// HarnessChart is chart with the arguments the harness runs the operator with: the chart's
// --upstream-status-timeout (3m) shortened, since a test waits for the NotReconciled of the
// controllers that do not run here (Strimzi without its build).
func HarnessChart(chart lab.Chart) lab.Chart {
	chart.Args = slices.Clone(chart.Args)
	for i, a := range chart.Args {
		if strings.HasPrefix(a, "--upstream-status-timeout=") {
			chart.Args[i] = "--upstream-status-timeout=" + UpstreamStatusTimeout.String()
		}
	}
	return chart
}

// Alive fails the test when an upstream component has exited.
func (h *Cluster) Alive(t testing.TB) {
	t.Helper()
	alive(t, h.components...)
}
