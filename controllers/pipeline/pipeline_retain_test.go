package pipeline_test

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/controllers/internal/envtestutil"
	"github.com/strata-dev/strata/controllers/pipeline"
	"github.com/strata-dev/strata/internal/desired"
)

// TestPipelineRetain deletes a Retain pipeline and creates it again. Strimzi is not running: the
// test sets the Kafka's status.clusterId as Strimzi would, makes the claims Strimzi would have
// made, and plays the garbage collector (deleting the children), which envtest does not run.
// Deleting: the KafkaTopic is unmanaged (strimzi.io/managed "false", so that the Topic Operator
// keeps the topic's data), the claims carry the cluster ID and the job's checkpoint claim loses
// the pipeline's owner reference (so the garbage collector keeps it) before the pipeline goes.
// Re-creating: the Kafka is created paused, given the retained ID in its status, then unpaused;
// the checkpoint claim is adopted, the same claim with its offsets.
func TestPipelineRetain(t *testing.T) {
	o := envtestutil.StartOperator(t)
	ctx := context.Background()
	c := o.C
	ns, _ := o.CreateSamples(t)
	p := &v1alpha1.AnalyticsPipeline{ObjectMeta: metav1.ObjectMeta{Name: "sensors", Namespace: ns}}
	const clusterID = "4Lb8cqMxQhW2fdJ0r1yT0g"

	t.Run("the cluster ID is recorded", func(t *testing.T) {
		envtestutil.WaitFor(t, c, p, func() error {
			if !envtestutil.SliceHas(p.Finalizers, pipeline.RetainFinalizer) {
				return fmt.Errorf("finalizers %v", p.Finalizers)
			}
			return nil
		})
		kafka := retainWaitChild(t, c, desired.KafkaGVK, ns, "sensors")
		if err := unstructured.SetNestedField(kafka.Object, clusterID, "status", "clusterId"); err != nil {
			t.Fatal(err)
		}
		if err := c.Status().Update(ctx, kafka); err != nil {
			t.Fatal(err)
		}
		envtestutil.WaitFor(t, c, p, func() error {
			if p.Status.KafkaClusterID != clusterID {
				return fmt.Errorf("status.kafkaClusterId %q", p.Status.KafkaClusterID)
			}
			return nil
		})
	})

	claims := []string{"data-0-sensors-broker-0", "data-0-sensors-controller-3"}
	for _, name := range claims {
		if err := c.Create(ctx, &corev1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{"strimzi.io/cluster": "sensors"}},
			Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}},
		}); err != nil {
			t.Fatal(err)
		}
	}
	again := p.DeepCopy()
	checkpoint := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "sensors-checkpoint"}}
	envtestutil.WaitFor(t, c, checkpoint, func() error { return nil })
	checkpointUID := checkpoint.UID

	// The topic grows as executors do (one partition per executor core: 6 × 5 = 30 where the
	// sample's 4 executors take 21); the pipeline created again declares the sample's executors.
	var grownRetention any
	t.Run("the topic grows with the executors", func(t *testing.T) {
		patch := client.RawPatch(types.MergePatchType, []byte(`{"spec":{"spark":{"executors":{"min":6}}}}`))
		if err := c.Patch(ctx, p, patch); err != nil {
			t.Fatal(err)
		}
		kt := retainObj(desired.KafkaTopicGVK, ns, "sensors")
		envtestutil.WaitFor(t, c, kt, func() error {
			if n, _, _ := unstructured.NestedInt64(kt.Object, "spec", "partitions"); n != 30 {
				return fmt.Errorf("spec.partitions %d, want 30", n)
			}
			return nil
		})
		grownRetention, _, _ = unstructured.NestedFieldCopy(kt.Object, "spec", "config", "retention.bytes")
	})

	t.Run("deleting unmanages the topic and records the ID on the claims", func(t *testing.T) {
		if err := c.Delete(ctx, p); err != nil {
			t.Fatal(err)
		}
		envtestutil.WaitGone(t, c, p)
		kt := retainWaitChild(t, c, desired.KafkaTopicGVK, ns, "sensors")
		if got := kt.GetAnnotations()["strimzi.io/managed"]; got != "false" {
			t.Errorf("KafkaTopic annotation strimzi.io/managed %q, want \"false\": the Topic Operator would delete the topic's data", got)
		}
		for _, name := range claims {
			pvc := &corev1.PersistentVolumeClaim{}
			if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, pvc); err != nil {
				t.Fatal(err)
			}
			if got := pvc.Annotations[pipeline.AnnotationKafkaClusterID]; got != clusterID {
				t.Errorf("claim %s: cluster ID annotation %q, want %q", name, got, clusterID)
			}
			if got := pvc.Annotations[pipeline.AnnotationKafkaTopicPartitions]; got != "sensors=30" {
				t.Errorf("claim %s: partitions annotation %q, want \"sensors=30\"", name, got)
			}
		}
		if err := c.Get(ctx, client.ObjectKeyFromObject(checkpoint), checkpoint); err != nil {
			t.Fatal(err)
		}
		if refs := checkpoint.OwnerReferences; len(refs) != 0 {
			t.Errorf("checkpoint claim owner references %+v: the garbage collector would delete the retained offsets", refs)
		}
	})

	t.Run("re-created, the Kafka reuses the retained cluster ID", func(t *testing.T) {
		// The garbage collector's part: the old pipeline's children go.
		// (Those it owns: the checkpoint claim has no owner any more.)
		for _, gvk := range []schema.GroupVersionKind{desired.KafkaGVK, desired.KafkaNodePoolGVK, desired.KafkaTopicGVK,
			desired.KafkaRebalanceGVK, desired.KafkaUserGVK, desired.SparkApplicationGVK, desired.ElasticsearchGVK,
			desired.ConfigMapGVK, desired.SecretGVK} {
			u := &unstructured.Unstructured{}
			u.SetGroupVersionKind(gvk)
			if err := c.DeleteAllOf(ctx, u, client.InNamespace(ns), client.MatchingLabels{desired.LabelManagedBy: desired.ManagedBy}); err != nil {
				t.Fatalf("%s: %v", gvk.Kind, err)
			}
		}
		envtestutil.WaitGone(t, c, retainObj(desired.KafkaGVK, ns, "sensors"))

		again.ObjectMeta = metav1.ObjectMeta{Name: again.Name, Namespace: ns, Labels: again.Labels, Annotations: again.Annotations}
		again.Status = v1alpha1.AnalyticsPipelineStatus{}
		if err := c.Create(ctx, again); err != nil {
			t.Fatal(err)
		}
		kafka := retainObj(desired.KafkaGVK, ns, "sensors")
		envtestutil.WaitFor(t, c, kafka, func() error {
			id, _, _ := unstructured.NestedString(kafka.Object, "status", "clusterId")
			if id != clusterID {
				return fmt.Errorf("status.clusterId %q, want %q", id, clusterID)
			}
			if v, ok := kafka.GetAnnotations()["strimzi.io/pause-reconciliation"]; ok {
				return fmt.Errorf("still paused (%q)", v)
			}
			return nil
		})
		if owner := metav1.GetControllerOf(kafka); owner == nil || owner.UID != again.UID {
			t.Errorf("Kafka owner %+v, want the new pipeline", owner)
		}
		envtestutil.WaitFor(t, c, again, func() error {
			if again.Status.KafkaClusterID != clusterID {
				return fmt.Errorf("status.kafkaClusterId %q", again.Status.KafkaClusterID)
			}
			return nil
		})
		envtestutil.WaitFor(t, c, checkpoint, func() error {
			if owner := metav1.GetControllerOf(checkpoint); owner == nil || owner.UID != again.UID {
				return fmt.Errorf("checkpoint claim owner %+v, want the new pipeline", owner)
			}
			return nil
		})
		if checkpoint.UID != checkpointUID {
			t.Errorf("the checkpoint claim was made anew (%s, was %s): the retained offsets are lost", checkpoint.UID, checkpointUID)
		}
	})

	t.Run("re-created, the topic keeps its partitions and their retention", func(t *testing.T) {
		// Planned afresh it would ask for 21: Strimzi's Topic Operator refuses the decrease but
		// applies the config, and retention.bytes planned for 21 partitions would let the 30 in
		// the kept volumes hold 30/21 of what they can.
		kt := retainObj(desired.KafkaTopicGVK, ns, "sensors")
		envtestutil.WaitFor(t, c, kt, func() error {
			if n, _, _ := unstructured.NestedInt64(kt.Object, "spec", "partitions"); n != 30 {
				return fmt.Errorf("spec.partitions %d, want the retained topic's 30", n)
			}
			return nil
		})
		got, _, _ := unstructured.NestedFieldCopy(kt.Object, "spec", "config", "retention.bytes")
		if grownRetention == nil || fmt.Sprint(got) != fmt.Sprint(grownRetention) {
			t.Errorf("retention.bytes %v, want %v, what the old pipeline planned for the topic's 30 partitions", got, grownRetention)
		}
		if again.Status.Plan == nil || again.Status.Plan.Partitions != 30 {
			t.Errorf("status.plan.partitions %v, want 30", again.Status.Plan)
		}
	})

	t.Run("Delete drops the finalizer", func(t *testing.T) {
		patch := client.RawPatch(types.MergePatchType, []byte(`{"spec":{"volumeReclaimPolicy":"Delete"}}`))
		if err := c.Patch(ctx, again, patch); err != nil {
			t.Fatal(err)
		}
		envtestutil.WaitFor(t, c, again, func() error {
			if envtestutil.SliceHas(again.Finalizers, pipeline.RetainFinalizer) {
				return fmt.Errorf("finalizers %v", again.Finalizers)
			}
			return nil
		})
	})
}

func retainObj(gvk schema.GroupVersionKind, ns, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	u.SetNamespace(ns)
	u.SetName(name)
	return u
}

func retainWaitChild(t *testing.T, c client.Client, gvk schema.GroupVersionKind, ns, name string) *unstructured.Unstructured {
	t.Helper()
	u := retainObj(gvk, ns, name)
	envtestutil.WaitFor(t, c, u, func() error { return nil })
	return u
}
