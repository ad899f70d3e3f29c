//go:build e2e

package e2e

// The suite's plumbing: commands (docker, kind, helm), the cluster's clients, manifests applied
// from the upstream projects' release URLs, and waiting.

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/internal/controlplane"
)

// fieldOwner is the suite's server-side apply field manager.
const fieldOwner = "strata-e2e"

// suite is one run: a kind cluster and clients for it.
type suite struct {
	t          *testing.T
	ctx        context.Context
	root       string
	versions   map[string]string
	cluster    string
	kubeconfig string
	artifacts  string
	image      string
	jobImage   string
	c          client.Client
	cs         kubernetes.Interface
}

func env(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// newSuite reads the configuration (environment variables, hack/versions.env) and checks that
// the tools are there, before anything is created.
func newSuite(t *testing.T) *suite {
	root, err := controlplane.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	versions, err := controlplane.Versions()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	s := &suite{
		t:         t,
		ctx:       ctx,
		root:      root,
		versions:  versions,
		cluster:   env("E2E_CLUSTER", "strata-e2e"),
		artifacts: env("E2E_ARTIFACTS", filepath.Join(root, "e2e", "artifacts")),
		image:     env("E2E_IMAGE", "strata:e2e"),
		jobImage:  env("E2E_JOB_IMAGE", "strata-spark:e2e"),
	}
	for _, tool := range []string{kindBin(), dockerBin(), helmBin()} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s not found: the suite needs docker, kind and helm (KIND, DOCKER, HELM name other binaries; "+
				"`make e2e` builds the pinned helm): %v", tool, err)
		}
	}
	return s
}

func kindBin() string   { return env("KIND", "kind") }
func dockerBin() string { return env("DOCKER", "docker") }
func helmBin() string   { return env("HELM", "helm") }

func (s *suite) version(name string) string {
	v := s.versions[name]
	if v == "" {
		s.t.Fatalf("hack/versions.env has no %s", name)
	}
	return v
}

// run runs a command, streaming its output to the test's output (go test -v shows it), and
// returns its stdout; it fails the test when the command fails.
func (s *suite) run(timeout time.Duration, name string, args ...string) string {
	s.t.Helper()
	out, err := s.tryRun(timeout, name, args...)
	if err != nil {
		s.t.Fatal(err)
	}
	return out
}

func (s *suite) tryRun(timeout time.Duration, name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(s.ctx, timeout)
	defer cancel()
	fmt.Printf("+ %s %s\n", name, strings.Join(args, " "))
	var stdout, both bytes.Buffer
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = s.root
	cmd.Stdout = io.MultiWriter(os.Stdout, &stdout, &both)
	cmd.Stderr = io.MultiWriter(os.Stderr, &both)
	if s.kubeconfig != "" {
		cmd.Env = append(os.Environ(), "KUBECONFIG="+s.kubeconfig)
	}
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("%s %s: %w\n%s", name, strings.Join(args, " "), err, tail(both.String(), 4000))
	}
	return stdout.String(), nil
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "..." + s[len(s)-n:]
}

// helm runs the pinned Helm against the kind cluster, with its own cache and config.
func (s *suite) helm(timeout time.Duration, args ...string) string {
	s.t.Helper()
	home := filepath.Join(s.artifacts, "helm-home")
	for _, v := range []string{"HELM_CACHE_HOME", "HELM_CONFIG_HOME", "HELM_DATA_HOME"} {
		s.t.Setenv(v, home)
	}
	return s.run(timeout, helmBin(), append(args, "--kubeconfig", s.kubeconfig)...)
}

// connect writes the cluster's kubeconfig and builds the clients.
func (s *suite) connect() {
	s.t.Helper()
	out := s.run(time.Minute, kindBin(), "get", "kubeconfig", "--name", s.cluster)
	if err := os.MkdirAll(s.artifacts, 0o755); err != nil {
		s.t.Fatal(err)
	}
	s.kubeconfig = filepath.Join(s.artifacts, "kubeconfig")
	if err := os.WriteFile(s.kubeconfig, []byte(out), 0o600); err != nil {
		s.t.Fatal(err)
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig([]byte(out))
	if err != nil {
		s.t.Fatal(err)
	}
	cfg.QPS, cfg.Burst = 50, 100
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	_ = v1alpha1.AddToScheme(scheme)
	if s.c, err = client.New(cfg, client.Options{Scheme: scheme}); err != nil {
		s.t.Fatal(err)
	}
	if s.cs, err = kubernetes.NewForConfig(cfg); err != nil {
		s.t.Fatal(err)
	}
}

// download fetches a release file of an upstream project and decodes its objects.
func (s *suite) download(url string) []*unstructured.Unstructured {
	s.t.Helper()
	fmt.Printf("+ GET %s\n", url)
	var body []byte
	err := retry(s.ctx, 5, func() error {
		req, err := http.NewRequestWithContext(s.ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("GET %s: %s", url, resp.Status)
		}
		body, err = io.ReadAll(resp.Body)
		return err
	})
	if err != nil {
		s.t.Fatal(err)
	}
	objs, err := controlplane.DecodeObjects(body)
	if err != nil {
		s.t.Fatalf("%s: %v", url, err)
	}
	return objs
}

func retry(ctx context.Context, attempts int, f func() error) error {
	var err error
	for i := 0; i < attempts; i++ {
		if err = f(); err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Duration(i+1) * 3 * time.Second):
		}
	}
	return err
}

// namespaced says whether objects of u's kind live in a namespace, as the cluster serves it.
func (s *suite) namespaced(u *unstructured.Unstructured) bool {
	s.t.Helper()
	gvk := u.GroupVersionKind()
	m, err := s.c.RESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		s.t.Fatalf("%s %s: %v", gvk, u.GetName(), err)
	}
	return m.Scope.Name() == meta.RESTScopeNameNamespace
}

// apply server-side applies objects (CRDs first, so that later objects' kinds are known); a
// namespaced object without a namespace goes to ns.
func (s *suite) apply(objs []*unstructured.Unstructured, ns string) {
	s.t.Helper()
	ordered := make([]*unstructured.Unstructured, 0, len(objs))
	for _, o := range objs {
		if o.GetKind() == "CustomResourceDefinition" || o.GetKind() == "Namespace" {
			ordered = append(ordered, o)
		}
	}
	for _, o := range objs {
		if o.GetKind() != "CustomResourceDefinition" && o.GetKind() != "Namespace" {
			ordered = append(ordered, o)
		}
	}
	for _, o := range ordered {
		if o.GetNamespace() == "" && ns != "" && s.namespaced(o) {
			o.SetNamespace(ns)
		}
		err := retry(s.ctx, 5, func() error {
			return s.c.Apply(s.ctx, client.ApplyConfigurationFromUnstructured(o), client.FieldOwner(fieldOwner), client.ForceOwnership)
		})
		if err != nil {
			s.t.Fatalf("applying %s %s/%s: %v", o.GetKind(), o.GetNamespace(), o.GetName(), err)
		}
	}
}

// create creates objects, leaving those that exist as they are (ECK asks for `kubectl create`
// of its CRDs: one is larger than a client-side apply can annotate).
func (s *suite) create(objs []*unstructured.Unstructured) {
	s.t.Helper()
	for _, o := range objs {
		if err := s.c.Create(s.ctx, o, client.FieldOwner(fieldOwner)); err != nil && !apierrors.IsAlreadyExists(err) {
			s.t.Fatalf("creating %s %s: %v", o.GetKind(), o.GetName(), err)
		}
	}
}

// eventually polls f every interval until it returns nil, failing the test after timeout with
// f's last error; every minute it logs where things stand.
func (s *suite) eventually(what string, timeout time.Duration, f func() error) {
	s.t.Helper()
	start := time.Now()
	lastLog := start
	var last error
	for {
		if last = f(); last == nil {
			s.t.Logf("%s: done after %s", what, time.Since(start).Round(time.Second))
			return
		}
		if time.Since(start) > timeout {
			s.t.Fatalf("timed out after %s waiting for %s: %v", timeout, what, last)
		}
		if time.Since(lastLog) > time.Minute {
			s.t.Logf("still waiting for %s (%s): %v", what, time.Since(start).Round(time.Second), last)
			lastLog = time.Now()
		}
		select {
		case <-s.ctx.Done():
			s.t.Fatal(s.ctx.Err())
		case <-time.After(5 * time.Second):
		}
	}
}

// rolledOut is nil once a Deployment or StatefulSet has all its replicas ready.
func (s *suite) rolledOut(kind, ns, name string) func() error {
	return func() error {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion("apps/v1")
		u.SetKind(kind)
		if err := s.c.Get(s.ctx, client.ObjectKey{Namespace: ns, Name: name}, u); err != nil {
			return err
		}
		want, found, _ := unstructured.NestedInt64(u.Object, "spec", "replicas")
		if !found {
			want = 1
		}
		ready, _, _ := unstructured.NestedInt64(u.Object, "status", "readyReplicas")
		if ready < want {
			return fmt.Errorf("%s %s/%s: %d of %d replicas ready", kind, ns, name, ready, want)
		}
		return nil
	}
}
