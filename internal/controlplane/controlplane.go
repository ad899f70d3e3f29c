package controlplane

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/strata-dev/strata/internal/localport"
)

// EnvUpstreamCRDs names a directory of upstream CRDs to use instead of third_party/upstream-crds.
const EnvUpstreamCRDs = "STRATA_UPSTREAM_CRDS"

// CRDWait is how long installing CRDs waits for the API server to serve them.
const CRDWait = 3 * time.Minute

// EnvUseExistingCluster makes Start use the cluster of the current kubeconfig.
const EnvUseExistingCluster = "STRATA_USE_EXISTING_CLUSTER"

// Env is a running control plane.
type Env struct {
	// Config reaches the API server as a cluster admin.
	Config *rest.Config
	// KubeConfig is a kubeconfig file's content for Config.
	KubeConfig []byte
	// Existing is true when Env runs against an existing cluster rather than its own.
	Existing bool

	env *envtest.Environment
	// kept are the certificate directories of restarted API servers (RestartAPIServer).
	kept []string
}

// RepoRoot is the directory holding Strata's go.mod, found from the working directory upwards.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil &&
			strings.HasPrefix(string(b), "module github.com/strata-dev/strata\n") {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("cannot find Strata's go.mod above the working directory")
		}
		dir = parent
	}
}

// UpstreamCRDDirs returns every directory holding upstream CRDs: the subdirectories of
// $STRATA_UPSTREAM_CRDS when set, else of third_party/upstream-crds, the copies vendored into the
// repository at the versions hack/versions.env pins (hack/upstream-crds.sh refreshes them).
func UpstreamCRDDirs() ([]string, error) {
	dir := os.Getenv(EnvUpstreamCRDs)
	if dir == "" {
		root, err := RepoRoot()
		if err != nil {
			return nil, err
		}
		dir = filepath.Join(root, "third_party", "upstream-crds")
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("upstream CRDs (Strimzi, Spark operator, ECK, Prometheus Operator): %w; "+
			"run `make upstream-crds` to refresh third_party/upstream-crds, or set %s to a directory of them",
			err, EnvUpstreamCRDs)
	}
	var dirs []string
	for _, e := range entries {
		if e.IsDir() {
			dirs = append(dirs, filepath.Join(dir, e.Name()))
		}
	}
	if len(dirs) == 0 {
		return nil, fmt.Errorf("no upstream CRDs in %s: run `make upstream-crds`, or set %s to a directory of them",
			dir, EnvUpstreamCRDs)
	}
	return dirs, nil
}

// Assets returns the directory holding kube-apiserver and etcd: $KUBEBUILDER_ASSETS, else the
// pinned builds of hack/tools.sh under bin/.
func Assets() (string, error) {
	if dir := os.Getenv("KUBEBUILDER_ASSETS"); dir != "" {
		return dir, nil
	}
	root, err := RepoRoot()
	if err != nil {
		return "", err
	}
	versions, err := Versions()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(root, "bin", "k8s", versions["KUBERNETES_VERSION"]+"-etcd-"+versions["ETCD_VERSION"])
	for _, bin := range []string{"kube-apiserver", "etcd"} {
		if _, err := os.Stat(filepath.Join(dir, bin)); err != nil {
			return "", fmt.Errorf("no %s in %s: run `make test` (or `hack/tools.sh envtest`) to build "+
				"the control plane, or set KUBEBUILDER_ASSETS", bin, dir)
		}
	}
	return dir, nil
}

// Versions reads the tool versions pinned in hack/versions.env.
func Versions() (map[string]string, error) {
	root, err := RepoRoot()
	if err != nil {
		return nil, err
	}
	f, err := os.Open(filepath.Join(root, "hack", "versions.env"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]string{}
	s := bufio.NewScanner(f)
	for s.Scan() {
		line, _, _ := strings.Cut(s.Text(), "#")
		if k, v, ok := strings.Cut(strings.TrimSpace(line), "="); ok {
			out[k] = strings.TrimSpace(v)
		}
	}
	return out, s.Err()
}

// Option changes how Start builds the control plane.
type Option func(*options)

type options struct{ withoutUpstream, withoutStrata bool }

// WithoutUpstreamCRDs starts a control plane with Strata's CRDs only, as a cluster where Strimzi,
// the Spark operator and ECK are not installed yet.
func WithoutUpstreamCRDs() Option { return func(o *options) { o.withoutUpstream = true } }

// WithoutStrataCRDs starts a control plane without Strata's CRDs, as a cluster where Strata is
// not installed yet: the upgrade test installs a previous release's chart, whose crds/ Helm
// installs.
func WithoutStrataCRDs() Option { return func(o *options) { o.withoutStrata = true } }

// Start starts a control plane (or connects to the existing cluster when
// $STRATA_USE_EXISTING_CLUSTER=1) and installs Strata's CRDs and the upstream CRDs. On an
// existing cluster, upstream CRDs that are already installed are left as they are: they belong
// to the operators running there.
func Start(ctx context.Context, opts ...Option) (*Env, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	root, err := RepoRoot()
	if err != nil {
		return nil, err
	}
	var upstream []string
	if !o.withoutUpstream {
		if upstream, err = UpstreamCRDDirs(); err != nil {
			return nil, err
		}
	}
	existing := os.Getenv(EnvUseExistingCluster) == "1" || os.Getenv(EnvUseExistingCluster) == "true"
	te := &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join(root, "config", "crd", "bases")},
		ErrorIfCRDPathMissing: true,
		UseExistingCluster:    &existing,
		// envtest waits 10s for CRDs to be served by default; ECK's 1.5 MB CRD alone can take
		// longer on a busy two-core machine.
		CRDInstallOptions:        envtest.CRDInstallOptions{MaxTime: CRDWait},
		ControlPlaneStartTimeout: 2 * time.Minute,
		// envtest's default is 20 s: a kube-apiserver draining its requests on a loaded machine
		// (RestartAPIServer) can take longer, and is then killed and left to exit in its own time.
		ControlPlaneStopTimeout: 2 * time.Minute,
	}
	if o.withoutStrata {
		te.CRDDirectoryPaths = nil
	}
	if !existing {
		assets, err := Assets()
		if err != nil {
			return nil, err
		}
		te.BinaryAssetsDirectory = assets
		te.CRDDirectoryPaths = append(te.CRDDirectoryPaths, upstream...)
		if err := choosePorts(te); err != nil {
			return nil, err
		}
	}
	cfg, err := te.Start()
	if err != nil {
		return nil, fmt.Errorf("starting the control plane: %w", err)
	}
	env := &Env{Config: cfg, KubeConfig: te.KubeConfig, Existing: existing, env: te}
	if existing && len(upstream) > 0 {
		if err := InstallMissing(ctx, cfg, upstream); err != nil {
			_ = env.Stop()
			return nil, err
		}
	}
	return env, nil
}

// choosePorts gives kube-apiserver and etcd ports below the kernel's ephemeral range
// (localport): envtest's own choice listens on port 0 and releases the port, which any outgoing
// connection on the machine may take before the process binds it. etcd's peer port is set
// through its flags, since envtest keeps it unexported and picks it again at every start
// (controller-runtime v0.24.1, pkg/internal/testing/controlplane/etcd.go: the peer URL is
// chosen by addr.Suggest in Start; defaultArgs sits under Configure's flags).
func choosePorts(te *envtest.Environment) error {
	var etcdClient, peer, secure string
	for _, p := range []*string{&etcdClient, &peer, &secure} {
		addr, err := localport.Pick()
		if err != nil {
			return err
		}
		*p = addr
	}
	etcd := &envtest.Etcd{URL: &url.URL{Scheme: "http", Host: etcdClient}}
	etcd.Configure().Set("listen-peer-urls", "http://"+peer)
	host, port, err := net.SplitHostPort(secure)
	if err != nil {
		return err
	}
	te.ControlPlane.Etcd = etcd
	te.ControlPlane.APIServer = &envtest.APIServer{
		SecureServing: envtest.SecureServing{ListenAddr: envtest.ListenAddr{Address: host, Port: port}},
	}
	return nil
}

// InstallMissing creates the CRDs of dirs that the cluster of cfg does not have yet, and waits
// until they are served.
func InstallMissing(ctx context.Context, cfg *rest.Config, dirs []string) error {
	opts := envtest.CRDInstallOptions{Paths: dirs, ErrorIfPathMissing: true}
	if err := envtest.ReadCRDFiles(&opts); err != nil {
		return err
	}
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		return err
	}
	var missing []*apiextensionsv1.CustomResourceDefinition
	for _, crd := range opts.CRDs {
		got := &apiextensionsv1.CustomResourceDefinition{}
		err := c.Get(ctx, client.ObjectKey{Name: crd.Name}, got)
		if apierrors.IsNotFound(err) {
			missing = append(missing, crd)
		} else if err != nil {
			return err
		}
	}
	if len(missing) == 0 {
		return nil
	}
	_, err = envtest.InstallCRDs(cfg, envtest.CRDInstallOptions{CRDs: missing, MaxTime: CRDWait})
	return err
}

// Stop stops the control plane (or only disconnects from an existing cluster).
func (e *Env) Stop() error {
	err := e.env.Stop()
	for _, dir := range e.kept {
		_ = os.RemoveAll(dir)
	}
	return err
}

// CRDNames are the CRDs every Strata control plane has: Strata's and the upstream ones the
// operator writes.
var CRDNames = []string{
	"analyticspipelines.strata.dev",
	"storagetiers.strata.dev",
	"kafkas.kafka.strimzi.io",
	"kafkanodepools.kafka.strimzi.io",
	"kafkatopics.kafka.strimzi.io",
	"kafkarebalances.kafka.strimzi.io",
	"sparkapplications.sparkoperator.k8s.io",
	"elasticsearches.elasticsearch.k8s.elastic.co",
	"servicemonitors.monitoring.coreos.com",
	"prometheusrules.monitoring.coreos.com",
}

// CertDir is the directory holding the API server's certificates and its ServiceAccount signing
// key pair (sa-signer.key, sa-signer.crt): what kube-controller-manager's token controllers need.
// Empty on an existing cluster.
func (e *Env) CertDir() string {
	if e.Existing || e.env.ControlPlane.APIServer == nil {
		return ""
	}
	return e.env.ControlPlane.APIServer.CertDir
}
