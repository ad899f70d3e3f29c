package desired

import (
	"context"
	"flag"
	"fmt"
	"os"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/strata-dev/strata/internal/controlplane"
)

// k8s reaches the control plane TestMain starts; nil with -short, which skips the dry runs.
var k8s client.Client

// TestMain starts one control plane (etcd and kube-apiserver with Strata's and the upstream
// CRDs) for the server-side dry runs. `go test -short` runs the pure tests only.
func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		os.Exit(m.Run())
	}
	ctx := context.Background()
	env, err := controlplane.Start(ctx)
	if err != nil {
		fmt.Fprintf(os.Stderr, "internal/desired: %v\n(use -short to run only the tests that need no control plane)\n", err)
		os.Exit(1)
	}
	code := func() int {
		defer func() { _ = env.Stop() }()
		k8s, err = client.New(env.Config, client.Options{})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		made := map[string]bool{}
		for _, f := range fixtures() {
			if made[f.pipeline.Namespace] {
				continue // cases may share a namespace
			}
			made[f.pipeline.Namespace] = true
			ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: f.pipeline.Namespace}}
			if err := k8s.Create(ctx, ns); err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 1
			}
		}
		return m.Run()
	}()
	os.Exit(code)
}

// dryRunApply server-side applies u as the operator will (one field owner, forced), without
// persisting it, and returns the object the API server would store.
func dryRunApply(ctx context.Context, u *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	out := u.DeepCopy()
	err := k8s.Apply(ctx, client.ApplyConfigurationFromUnstructured(out),
		client.FieldOwner("strata"), client.ForceOwnership, client.DryRunAll)
	return out, err
}

// TestDryRunApply validates every built object against the real CRDs (Strimzi, Spark operator,
// ECK) and their CEL rules: server-side apply rejects fields the schema does not declare.
func TestDryRunApply(t *testing.T) {
	if k8s == nil {
		t.Skip("no control plane (-short)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, tc := range testCases(t) {
		for _, u := range All(tc.in) {
			t.Run(tc.name+"/"+u.GetKind()+"/"+u.GetName(), func(t *testing.T) {
				got, err := dryRunApply(ctx, u)
				if err != nil {
					t.Fatalf("the API server rejects %s %s/%s: %v", u.GetKind(), u.GetNamespace(), u.GetName(), err)
				}
				// The server's copy keeps what was built (no field pruned as unknown).
				for _, path := range [][]string{{"metadata", "labels"}, {"metadata", "ownerReferences"}} {
					want, _, _ := unstructured.NestedFieldNoCopy(u.Object, path...)
					have, _, _ := unstructured.NestedFieldNoCopy(got.Object, path...)
					if fmt.Sprint(want) != fmt.Sprint(have) {
						t.Errorf("%v: built %v, server has %v", path, want, have)
					}
				}
				if spec, ok := u.Object["spec"]; ok && fmt.Sprint(got.Object["spec"]) != fmt.Sprint(spec) {
					t.Errorf("the server changed the spec:\nbuilt  %v\nserver %v", spec, got.Object["spec"])
				}
			})
		}
	}
}

// TestDryRunRejectsUnknownFields shows that the dry run can fail: a field the CRD does not
// declare, or a value its schema forbids, is an error, not silently dropped.
func TestDryRunRejectsUnknownFields(t *testing.T) {
	if k8s == nil {
		t.Skip("no control plane (-short)")
	}
	ctx := context.Background()
	in := splitTiers(t)

	bogus := NodePools(in)[1]
	if err := unstructured.SetNestedField(bogus.Object, int64(3), "spec", "brokers"); err != nil {
		t.Fatal(err)
	}
	if _, err := dryRunApply(ctx, bogus); err == nil {
		t.Error("a KafkaNodePool with an undeclared spec.brokers was accepted")
	} else {
		t.Logf("as expected: %v", err)
	}

	badCapacity := Kafka(in)
	if err := unstructured.SetNestedField(badCapacity.Object, "112500000 bytes",
		"spec", "cruiseControl", "brokerCapacity", "inboundNetwork"); err != nil {
		t.Fatal(err)
	}
	if _, err := dryRunApply(ctx, badCapacity); err == nil {
		t.Error("a Kafka with a malformed brokerCapacity was accepted")
	} else {
		t.Logf("as expected: %v", err)
	}
}
