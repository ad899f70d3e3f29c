package pipeline

import (
	"context"
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/internal/desired"
	"github.com/strata-dev/strata/internal/ssa"
)

// With volumeReclaimPolicy Retain, deleting a pipeline keeps the Kafka data, which takes three
// things besides the claims Strimzi keeps (deleteClaim false):
//
//   - The topic's data. The KafkaTopic goes with the pipeline, and Strimzi's Topic Operator deletes
//     the topic in Kafka when a managed KafkaTopic is deleted; for a KafkaTopic annotated
//     strimzi.io/managed: "false" it only removes its finalizer (Strimzi 1.2.0,
//     topic-operator/.../BatchingTopicController.java, deleteInternal → deleteUnmanagedTopic;
//     TopicOperatorUtil.isManaged). The pipeline's finalizer annotates the KafkaTopic so before
//     the garbage collector deletes it (which, with the default background propagation, waits
//     for the pipeline, and so for the finalizer).
//   - The cluster ID. A new Kafka resource gets a new KRaft cluster ID and its brokers refuse
//     volumes formatted with another. The operator records the ID (the Kafka's status.clusterId)
//     in the pipeline's status and, on deletion, on the kept claims.
//   - Its reuse. Strimzi 1.2.0 takes the cluster ID from the Kafka's status when it is set and
//     generates one only otherwise (cluster-operator/.../model/nodepools/NodePoolUtils.java,
//     getOrGenerateKRaftClusterId; KafkaAssemblyOperator keeps a status.clusterId it finds, paused
//     or not), and its documented recovery is: create the Kafka paused
//     (strimzi.io/pause-reconciliation: "true"), set status.clusterId, unpause
//     (documentation/modules/managing/proc-cluster-recovery-volume.adoc). A pipeline created
//     where claims of a Kafka cluster of its name carry a recorded ID does exactly that.
//
// The topic's partitions are recorded on the claims beside the cluster ID, and kept by the plan of
// the pipeline created again (retained_claims.go).
//
// The ingestion job's checkpoint claim follows the same policy: it holds the Kafka offsets the
// retained index already has, so the finalizer removes the pipeline's owner reference from it
// and the garbage collector leaves it. A pipeline created again under the same name applies
// the claim of the same name, which adopts it, and its job resumes where the old one stopped
// instead of replaying the retained topic from its earliest offset.

// RetainFinalizer is set on pipelines with volumeReclaimPolicy Retain: before the pipeline goes,
// its KafkaTopic is unmanaged and its Kafka claims carry the cluster ID.
const RetainFinalizer = "strata.dev/retain-kafka-data"

// Annotations of the retained-cluster handling.
const (
	// AnnotationKafkaClusterID is set on kept Kafka claims: the cluster ID their data belongs to.
	AnnotationKafkaClusterID = "strata.dev/kafka-cluster-id"
	// annotationRecoverClusterID is set on a Kafka created paused to reuse a retained ID.
	annotationRecoverClusterID = "strata.dev/recover-cluster-id"
	strimziPause               = "strimzi.io/pause-reconciliation"
	strimziManaged             = "strimzi.io/managed"
)

const eventKafkaClusterRecovered = "KafkaClusterIDReused"

func retains(p *v1alpha1.AnalyticsPipeline) bool {
	return p.Spec.VolumeReclaimPolicy != "Delete"
}

// ensureFinalizer gives a pipeline its policy's finalizer (RetainFinalizer, DeleteFinalizer:
// pipeline_delete.go) and removes the other's.
func (r *Reconciler) ensureFinalizer(ctx context.Context, s *scope) error {
	p := s.pipeline
	want := finalizer(p)
	other := RetainFinalizer
	if want == RetainFinalizer {
		other = DeleteFinalizer
	}
	if controllerutil.ContainsFinalizer(p, want) && !controllerutil.ContainsFinalizer(p, other) {
		return nil
	}
	patch := client.MergeFromWithOptions(p.DeepCopy(), client.MergeFromWithOptimisticLock{})
	controllerutil.AddFinalizer(p, want)
	controllerutil.RemoveFinalizer(p, other)
	if err := r.Client.Patch(ctx, p, patch); err != nil {
		return err
	}
	// The status patch's base must carry the metadata as it is now.
	s.before.ObjectMeta = *p.ObjectMeta.DeepCopy()
	return nil
}

// finalizeRetained runs when a pipeline with RetainFinalizer is being deleted: it unmanages the
// KafkaTopic, records the cluster ID on the Kafka claims, and lets the pipeline go.
func (r *Reconciler) finalizeRetained(ctx context.Context, p *v1alpha1.AnalyticsPipeline) error {
	if !controllerutil.ContainsFinalizer(p, RetainFinalizer) {
		return nil
	}
	// The cache may still hold a pipeline whose finalizer an earlier reconcile removed: only the
	// API server says whether there is still something to do (and nothing is written twice).
	fresh := &v1alpha1.AnalyticsPipeline{}
	if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(p), fresh); err != nil {
		return client.IgnoreNotFound(err)
	}
	if !controllerutil.ContainsFinalizer(fresh, RetainFinalizer) {
		return nil
	}
	p = fresh
	var topics []*unstructured.Unstructured
	if r.serves(desired.KafkaTopicGVK) {
		var err error
		if topics, err = children(ctx, r.Client, desired.KafkaTopicGVK, p, r.watches); err != nil {
			return err
		}
		for _, kt := range topics {
			if err := r.unmanageTopic(ctx, kt); err != nil {
				return err
			}
		}
	}
	if err := r.keepCheckpoint(ctx, p); err != nil {
		return err
	}
	id := p.Status.KafkaClusterID
	if r.serves(desired.KafkaGVK) {
		kafkas, err := children(ctx, r.Client, desired.KafkaGVK, p, r.watches)
		if err != nil {
			return err
		}
		for _, k := range kafkas {
			if got, _, _ := unstructured.NestedString(k.Object, "status", "clusterId"); got != "" {
				id = got
			}
		}
	}
	if err := r.recordRetained(ctx, p, map[string]string{AnnotationKafkaClusterID: id,
		AnnotationKafkaTopicPartitions: topicRecord(p, topics)}); err != nil {
		return err
	}
	patch := client.MergeFromWithOptions(p.DeepCopy(), client.MergeFromWithOptimisticLock{})
	controllerutil.RemoveFinalizer(p, RetainFinalizer)
	return client.IgnoreNotFound(r.Client.Patch(ctx, p, patch))
}

// keepCheckpoint removes p's owner reference from its checkpoint claim, if it has one, so that
// the claim outlives the pipeline (its other owner references, if any, stay).
func (r *Reconciler) keepCheckpoint(ctx context.Context, p *v1alpha1.AnalyticsPipeline) error {
	claims, err := children(ctx, r.Client, desired.PersistentVolumeClaimGVK, p, r.watches)
	if err != nil {
		return err
	}
	for _, pvc := range claims {
		if pvc.GetName() != desired.CheckpointClaimName(p) {
			continue
		}
		var keep []any
		for _, ref := range pvc.GetOwnerReferences() {
			if ref.UID != p.UID {
				keep = append(keep, map[string]any{"apiVersion": ref.APIVersion, "kind": ref.Kind,
					"name": ref.Name, "uid": string(ref.UID), "controller": ref.Controller,
					"blockOwnerDeletion": ref.BlockOwnerDeletion})
			}
		}
		// A merge patch replaces the whole list; the resourceVersion makes it fail rather than
		// drop an owner reference added meanwhile.
		body, err := json.Marshal(map[string]any{"metadata": map[string]any{
			"resourceVersion": pvc.GetResourceVersion(), "ownerReferences": keep}})
		if err != nil {
			return err
		}
		if err := r.Client.Patch(ctx, pvc, client.RawPatch(types.MergePatchType, body)); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("keeping the checkpoint claim %s/%s: %w", pvc.GetNamespace(), pvc.GetName(), err)
		}
		log.FromContext(ctx).Info("kept the checkpoint claim: the retained data's offsets", "claim", pvc.GetName())
	}
	return nil
}

// unmanageTopic annotates a KafkaTopic strimzi.io/managed: "false" (once).
func (r *Reconciler) unmanageTopic(ctx context.Context, kt *unstructured.Unstructured) error {
	if kt.GetAnnotations()[strimziManaged] == "false" || kt.GetDeletionTimestamp() != nil {
		return nil
	}
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:"false"}}}`, strimziManaged)
	err := r.Client.Patch(ctx, kt, client.RawPatch(types.MergePatchType, []byte(patch)))
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("unmanaging KafkaTopic %s/%s before the pipeline goes: %w", kt.GetNamespace(), kt.GetName(), err)
	}
	log.FromContext(ctx).Info("unmanaged the KafkaTopic so that its deletion keeps the topic's data", "kafkaTopic", kt.GetName())
	return nil
}

// kafkaClusterStep records the Kafka's cluster ID in the status and, for a Kafka still to be
// created where claims of a retained cluster of its name carry one, reuses it: the Kafka is
// created paused, given that ID in its status, then unpaused.
func (r *Reconciler) kafkaClusterStep(ctx context.Context, s *scope) error {
	var want *unstructured.Unstructured
	for _, u := range s.desired {
		if u.GroupVersionKind() == desired.KafkaGVK {
			want = u
		}
	}
	if want == nil {
		return nil
	}
	cur := s.observed[ssa.KeyOf(want)]
	if cur == nil {
		if !retains(s.pipeline) {
			return nil
		}
		rc, err := r.retained(ctx, s)
		if err != nil || rc.clusterID == "" {
			return err
		}
		pauseForRecovery(want, rc.clusterID)
		log.FromContext(ctx).Info("creating the Kafka paused to reuse a retained cluster ID", "clusterId", rc.clusterID, "claims", rc.from)
		return nil
	}
	id, _, _ := unstructured.NestedString(cur.Object, "status", "clusterId")
	retained := cur.GetAnnotations()[annotationRecoverClusterID]
	switch {
	case retained == "":
	case id == "":
		// Created paused: give it the retained ID, then unpause once the status says so.
		patch := fmt.Sprintf(`{"metadata":{"resourceVersion":%q},"status":{"clusterId":%q}}`, cur.GetResourceVersion(), retained)
		if err := r.Client.Status().Patch(ctx, cur.DeepCopy(), client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
			return fmt.Errorf("setting the retained cluster ID on Kafka %s: %w", cur.GetName(), err)
		}
		pauseForRecovery(want, retained)
		if r.Recorder != nil {
			r.Recorder.Eventf(s.pipeline, cur, corev1.EventTypeNormal, eventKafkaClusterRecovered, "Recover",
				"Kafka %s takes the cluster ID %s recorded on its retained claims; it is unpaused next", cur.GetName(), retained)
		}
	case id != retained:
		// Not what was asked: stay paused rather than let brokers start on volumes of another
		// cluster (they would refuse them).
		pauseForRecovery(want, retained)
		log.FromContext(ctx).Info("Kafka's cluster ID differs from the retained one: left paused", "clusterId", id, "retained", retained)
	}
	if id != "" {
		s.pipeline.Status.KafkaClusterID = id
	}
	return nil
}

// pauseForRecovery makes the desired Kafka paused, noting the cluster ID it is to reuse.
func pauseForRecovery(kafka *unstructured.Unstructured, id string) {
	a := kafka.GetAnnotations()
	if a == nil {
		a = map[string]string{}
	}
	a[strimziPause] = "true"
	a[annotationRecoverClusterID] = id
	kafka.SetAnnotations(a)
}

// serves says whether the API server serves a child kind (its CRD is installed).
func (r *Reconciler) serves(gvk schema.GroupVersionKind) bool {
	_, err := r.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	return err == nil
}
