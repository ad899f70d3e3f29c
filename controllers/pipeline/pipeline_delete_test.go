package pipeline_test

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/controllers/internal/envtestutil"
	"github.com/strata-dev/strata/controllers/pipeline"
	"github.com/strata-dev/strata/internal/desired"
)

// TestPipelineDeleteTakesEveryElasticsearchClaim deletes a Delete pipeline whose Elasticsearch
// has a claim without an owner reference, as the StatefulSet controller makes one for a pod whose
// claim went with a lost node before ECK's next reconcile owns it (pipeline_delete.go). The
// operator must delete the Elasticsearch, then that claim, and only then let the pipeline go; a
// claim of another cluster in the namespace stays. envtest runs no garbage collector and no ECK:
// the Elasticsearch has no pods, and the claims stay Terminating (kubernetes.io/pvc-protection)
// once deleted.
func TestPipelineDeleteTakesEveryElasticsearchClaim(t *testing.T) {
	o := envtestutil.StartOperator(t)
	ctx := context.Background()
	c := o.C
	ns, _ := o.CreateSamples(t)
	p := &v1alpha1.AnalyticsPipeline{ObjectMeta: metav1.ObjectMeta{Name: "sensors", Namespace: ns}}
	if err := c.Patch(ctx, p, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"volumeReclaimPolicy":"Delete"}}`))); err != nil {
		t.Fatal(err)
	}
	envtestutil.WaitFor(t, c, p, func() error {
		if !envtestutil.SliceHas(p.Finalizers, pipeline.DeleteFinalizer) || envtestutil.SliceHas(p.Finalizers, pipeline.RetainFinalizer) {
			return fmt.Errorf("finalizers %v, want %s only", p.Finalizers, pipeline.DeleteFinalizer)
		}
		return nil
	})
	es := retainWaitChild(t, c, desired.ElasticsearchGVK, ns, desired.ElasticsearchName(p))

	claim := func(name, cluster string) *corev1.PersistentVolumeClaim {
		pvc := &corev1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name,
				Labels: map[string]string{"elasticsearch.k8s.elastic.co/cluster-name": cluster}},
			Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}},
		}
		if err := c.Create(ctx, pvc); err != nil {
			t.Fatal(err)
		}
		return pvc
	}
	orphan := claim("elasticsearch-data-sensors-es-data-0", desired.ElasticsearchName(p))
	other := claim("elasticsearch-data-other-es-data-0", "other")

	if err := c.Delete(ctx, p); err != nil {
		t.Fatal(err)
	}
	envtestutil.WaitGone(t, c, p)
	envtestutil.WaitGone(t, c, es)
	got := &corev1.PersistentVolumeClaim{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(orphan), got); err == nil && got.DeletionTimestamp == nil {
		t.Errorf("claim %s of the deleted pipeline's Elasticsearch is not deleted", orphan.Name)
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(other), got); err != nil || got.DeletionTimestamp != nil {
		t.Errorf("claim %s of another cluster: %v, deletion %v; want it left alone", other.Name, err, got.DeletionTimestamp)
	}
}
