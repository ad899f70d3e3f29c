package pipeline

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/internal/desired"
)

// With volumeReclaimPolicy Delete, deleting a pipeline deletes its Elasticsearch data too, and
// ECK alone does not always: it deletes a cluster's claims through the owner reference it sets
// on each claim, and it sets that reference in its own reconcile of the cluster (ECK 3.5.0,
// pkg/controller/elasticsearch/driver/stateful/pvc_owner.go, reconcilePVCOwnerRefs, called from
// nodes.go), not when the claim is made. A claim the StatefulSet controller makes between two of
// ECK's reconciles — for a pod whose claim went with a lost node (kubernetes v1.36.3
// pkg/controller/statefulset/stateful_set_control.go, processReplica) — has no owner until ECK
// looks again, and if the cluster is deleted first the claim outlives it: its local volume stays
// Bound for ever, never wiped, never given to another claim. The crash test found it
// (internal/chaos, node loss then delete).
//
// So a Delete pipeline carries DeleteFinalizer, and when it is deleted the operator deletes the
// Elasticsearch itself, waits until the cluster and its pods are gone (nothing can make a claim
// then: the StatefulSets go with the cluster, and a StatefulSet's controller makes claims only
// for its pods), deletes every claim still labelled with the cluster's name, and lets the
// pipeline go. The garbage collector deletes the other children as before.

// DeleteFinalizer is set on pipelines with volumeReclaimPolicy Delete: before the pipeline goes,
// its Elasticsearch cluster goes, then every claim of that cluster.
const DeleteFinalizer = "strata.dev/delete-elasticsearch-claims"

// eckClusterLabel is the label ECK puts on every claim and pod of a cluster (ECK 3.5.0,
// pkg/controller/elasticsearch/label/label.go, ClusterNameLabelName).
const eckClusterLabel = "elasticsearch.k8s.elastic.co/cluster-name"

// deletionRecheck is how often a deletion waiting for the cluster's pods looks again (pods of a
// deleted cluster go without an event the pipeline's watches would all see).
const deletionRecheck = 2 * time.Second

// finalizer is the finalizer a pipeline carries: each policy its own.
func finalizer(p *v1alpha1.AnalyticsPipeline) string {
	if retains(p) {
		return RetainFinalizer
	}
	return DeleteFinalizer
}

// finalizeDeleted runs when a pipeline with DeleteFinalizer is being deleted. It returns how long
// to wait before looking again while the cluster is still going.
func (r *Reconciler) finalizeDeleted(ctx context.Context, p *v1alpha1.AnalyticsPipeline) (time.Duration, error) {
	if !controllerutil.ContainsFinalizer(p, DeleteFinalizer) {
		return 0, nil
	}
	// As finalizeRetained: only the API server says whether the finalizer is still there.
	fresh := &v1alpha1.AnalyticsPipeline{}
	if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(p), fresh); err != nil {
		return 0, client.IgnoreNotFound(err)
	}
	if !controllerutil.ContainsFinalizer(fresh, DeleteFinalizer) {
		return 0, nil
	}
	p = fresh
	if r.serves(desired.ElasticsearchGVK) {
		if wait, err := r.deleteElasticsearch(ctx, p); err != nil || wait != "" {
			if wait != "" {
				log.FromContext(ctx).V(1).Info("deleting the pipeline: waiting", "for", wait)
			}
			return deletionRecheck, err
		}
	}
	patch := client.MergeFromWithOptions(p.DeepCopy(), client.MergeFromWithOptimisticLock{})
	controllerutil.RemoveFinalizer(p, DeleteFinalizer)
	return 0, client.IgnoreNotFound(r.Client.Patch(ctx, p, patch))
}

// deleteElasticsearch moves the cluster's deletion a step on: it deletes the Elasticsearch, and
// once the cluster and its pods are gone, the cluster's claims. wait says what it waits for
// ("" when the claims are deleted).
func (r *Reconciler) deleteElasticsearch(ctx context.Context, p *v1alpha1.AnalyticsPipeline) (wait string, err error) {
	name := desired.ElasticsearchName(p)
	es := &unstructured.Unstructured{}
	es.SetGroupVersionKind(desired.ElasticsearchGVK)
	err = r.APIReader.Get(ctx, client.ObjectKey{Namespace: p.Namespace, Name: name}, es)
	switch {
	case err == nil:
		if !isOwnedBy(es, p) {
			return "", nil // not the pipeline's: neither it nor its claims are Strata's to delete
		}
		if es.GetDeletionTimestamp() == nil {
			if err := r.Client.Delete(ctx, es, client.PropagationPolicy("Background")); client.IgnoreNotFound(err) != nil {
				return "", err
			}
		}
		return "Elasticsearch " + name + " to be deleted", nil
	case !apierrors.IsNotFound(err):
		return "", err
	}
	var pods corev1.PodList
	if err := r.APIReader.List(ctx, &pods, client.InNamespace(p.Namespace), client.MatchingLabels{eckClusterLabel: name}); err != nil {
		return "", err
	}
	if len(pods.Items) > 0 {
		return fmt.Sprintf("%d pod(s) of Elasticsearch %s to be deleted", len(pods.Items), name), nil
	}
	var claims corev1.PersistentVolumeClaimList
	if err := r.APIReader.List(ctx, &claims, client.InNamespace(p.Namespace), client.MatchingLabels{eckClusterLabel: name}); err != nil {
		return "", err
	}
	for i := range claims.Items {
		c := &claims.Items[i]
		if c.DeletionTimestamp != nil {
			continue
		}
		if err := r.Client.Delete(ctx, c); client.IgnoreNotFound(err) != nil {
			return "", err
		}
		log.FromContext(ctx).Info("deleted a claim of the deleted pipeline's Elasticsearch", "claim", c.Name,
			"owners", len(c.OwnerReferences))
	}
	return "", nil
}

// isOwnedBy says whether obj's controller is the pipeline.
func isOwnedBy(obj client.Object, p *v1alpha1.AnalyticsPipeline) bool {
	for _, ref := range obj.GetOwnerReferences() {
		if ref.UID == p.UID {
			return true
		}
	}
	return false
}
