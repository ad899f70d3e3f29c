package envtestutil

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// sampleLocalNodes is how many nodes a test's copy of a local sample tier gets: enough volumes
// for the sample pipeline at its bounds' maxima (6 brokers + 10 spill claims + 6 data nodes),
// since the plan refuses more claims than a local tier has volumes.
const sampleLocalNodes = 24

// localNodesFor gives a local sample tier nodes of its own: its selector is narrowed to a label
// unique to the test, and that many nodes carry it (removed when the test ends), so the tier
// controller creates the volumes the pipeline's claims need without touching other tests' tiers.
func localNodesFor(t testing.TB, c client.Client, tier *unstructured.Unstructured, ns string) {
	t.Helper()
	if _, ok, _ := unstructured.NestedMap(tier.Object, "spec", "local"); !ok {
		return
	}
	label := map[string]any{"strata.dev/test-local": ns}
	if err := unstructured.SetNestedField(tier.Object, label, "spec", "local", "nodeSelector", "matchLabels"); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for i := 0; i < sampleLocalNodes; i++ {
		n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%s-n%d", ns, tier.GetName()[:4], i),
			Labels: map[string]string{"strata.dev/test-local": ns}}}
		if err := c.Create(ctx, n); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Delete(context.Background(), n) })
	}
}
