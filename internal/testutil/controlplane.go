package testutil

import (
	"context"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/internal/controlplane"
)

// Scheme knows the built-in kinds, CRDs and Strata's kinds: what the tests' clients read.
func Scheme() *runtime.Scheme {
	s := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(s)
	_ = apiextensionsv1.AddToScheme(s)
	_ = v1alpha1.AddToScheme(s)
	return s
}

// ControlPlane starts a control plane (etcd and kube-apiserver with Strata's and the upstream
// CRDs) that stops when the test ends, and a client of it.
func ControlPlane(t testing.TB, opts ...controlplane.Option) (*controlplane.Env, client.Client) {
	t.Helper()
	env, err := controlplane.Start(context.Background(), opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	c, err := client.New(env.Config, client.Options{Scheme: Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	return env, c
}
