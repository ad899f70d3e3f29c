package upstream

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/internal/testutil/gen"
)

// TestGoldenCasesRunOnRealControllers applies every golden case's objects (what Strata builds
// for it, internal/desired/testdata) and `strata render`'s output for the sample, each in a
// namespace of its own, and checks what ECK, the Spark
// operator, the scheduler and the controller-manager make of them: ECK's pods Running with
// their claims bound on the pods' nodes and the masters apart, the driver Running, and every
// object a pod names existing. The local tier the cases' claims name (strata-nvme-local) is
// Strata's own, with its volumes made by the operator's tier controller; the other classes are
// the cluster's.
func TestGoldenCasesRunOnRealControllers(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the upstream harness starts a control plane and six controllers")
	}
	var cases, tiers []GoldenCase
	var namespaces []string
	// And the sample as `strata render` prints it, in a namespace of its own, without the
	// pipeline: what a GitOps user applies from render's output.
	rendered := Rendered(t, "rendered-sample", "rendered-sample", SampleFiles(t)...)
	for _, c := range append(GoldenCases(t), rendered) {
		if c.Pipeline() {
			cases = append(cases, c)
			namespaces = append(namespaces, c.Name)
		} else {
			tiers = append(tiers, c)
		}
	}
	// Three disks per node: the cases' claims on the tier all at once.
	nvme := gen.NVMeTier(gen.SetLocal(map[string]string{NVMeLabel: "true"}, "400Gi", "/mnt/nvme0", "/mnt/nvme1", "/mnt/nvme2"))
	h := Start(t, Options{JobNamespaces: namespaces, Fixtures: []client.Object{
		&v1alpha1.StorageTier{ObjectMeta: metav1.ObjectMeta{Name: nvme.Name}, Spec: nvme.Spec}}})
	ctx := context.Background()
	// A tier's volumes name nodes the harness does not have: the API server validates them
	// (dry run) without making them.
	for _, c := range tiers {
		c.Apply(ctx, t, h.Client, c.Name, client.DryRunAll)
	}
	for _, c := range cases {
		for _, class := range c.StorageClasses() {
			if class == nvme.Spec.StorageClassName {
				continue
			}
			if err := h.Client.Create(ctx, StorageClass(class)); client.IgnoreAlreadyExists(err) != nil {
				t.Fatal(err)
			}
		}
		c.Apply(ctx, t, h.Client, c.Name)
	}
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			es, app, user := c.named("Elasticsearch"), c.named("SparkApplication"), c.named("KafkaUser")
			t.Run("Elasticsearch", func(t *testing.T) { checkElasticsearch(ctx, t, h, c.Name, es) })
			t.Run("SparkDriver", func(t *testing.T) { checkDriver(ctx, t, h, c.Name, app) })
			t.Run("References", func(t *testing.T) { checkReferences(ctx, t, h, c.Name, user) })
		})
	}
	h.Alive(t)
}
