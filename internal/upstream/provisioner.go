package upstream

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The StorageClasses a cluster brings, which Strata does not make: a default class for the
// controllers' and masters' small volumes, and the sample's st1 (AWS EBS). Both provisioned by
// the harness's provisioner (a CSI driver's external-provisioner in a cluster).
const (
	DefaultClass = "standard"
	ST1Class     = "st1"
	provisioner  = "provisioner.harness.strata.dev"
	// selectedNode is the annotation kube-controller-manager's PV controller sets on a
	// WaitForFirstConsumer claim once the scheduler has picked its pod's node
	// (k8s.io/kubernetes v1.36.3, pkg/controller/volume/persistentvolume: AnnSelectedNode).
	selectedNode = "volume.kubernetes.io/selected-node"
)

// storageClasses are the cluster's own classes.
func storageClasses() []client.Object {
	class := func(name string, isDefault bool) *storagev1.StorageClass {
		sc := StorageClass(name)
		if isDefault {
			sc.Annotations = map[string]string{"storageclass.kubernetes.io/is-default-class": "true"}
		}
		return sc
	}
	return []client.Object{class(DefaultClass, true), class(ST1Class, false)}
}

// provision does what an external provisioner does for the harness's classes, every interval
// until ctx ends: a volume for each claim the scheduler has placed, in the zone of the node it
// chose, and the volume deleted once its claim is gone (reclaim policy Delete). A cloud's
// network volume is reachable from every node of its zone (the AWS EBS CSI driver's volumes
// carry a topology.kubernetes.io/zone node affinity), so a pod whose node is lost starts again
// on another node of that zone with its data; pinned to the node instead, a master or KRaft
// controller on a lost node could never start again.
func provision(ctx context.Context, t testing.TB, c client.Client, interval time.Duration) {
	logged := map[string]bool{}
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(interval):
		}
		if err := provisionOnce(ctx, c); err != nil && ctx.Err() == nil && !logged[err.Error()] {
			logged[err.Error()] = true
			t.Logf("harness provisioner: %v", err)
		}
	}
}

func provisionOnce(ctx context.Context, c client.Client) error {
	var classes storagev1.StorageClassList
	if err := c.List(ctx, &classes); err != nil {
		return err
	}
	ours := map[string]bool{}
	for _, sc := range classes.Items {
		ours[sc.Name] = sc.Provisioner == provisioner
	}
	var claims corev1.PersistentVolumeClaimList
	if err := c.List(ctx, &claims); err != nil {
		return err
	}
	var nodes corev1.NodeList
	if err := c.List(ctx, &nodes); err != nil {
		return err
	}
	zones := map[string]string{}
	for _, n := range nodes.Items {
		zones[n.Name] = n.Labels[ZoneLabel]
	}
	for i := range claims.Items {
		pvc := &claims.Items[i]
		node := pvc.Annotations[selectedNode]
		if pvc.Status.Phase != corev1.ClaimPending || node == "" || pvc.Spec.VolumeName != "" || pvc.Spec.StorageClassName == nil || !ours[*pvc.Spec.StorageClassName] {
			continue
		}
		// The volume's zone is the chosen node's; a node without one (or gone) gets a volume of
		// its own, as a zoneless cluster's provisioner would give.
		where := corev1.NodeSelectorRequirement{Key: corev1.LabelHostname, Operator: corev1.NodeSelectorOpIn, Values: []string{node}}
		if zone := zones[node]; zone != "" {
			where = corev1.NodeSelectorRequirement{Key: ZoneLabel, Operator: corev1.NodeSelectorOpIn, Values: []string{zone}}
		}
		pv := &corev1.PersistentVolume{
			ObjectMeta: metav1.ObjectMeta{Name: "pvc-" + string(pvc.UID),
				Annotations: map[string]string{"pv.kubernetes.io/provisioned-by": provisioner}},
			Spec: corev1.PersistentVolumeSpec{
				Capacity:                      corev1.ResourceList{corev1.ResourceStorage: pvc.Spec.Resources.Requests[corev1.ResourceStorage]},
				AccessModes:                   pvc.Spec.AccessModes,
				PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimDelete,
				StorageClassName:              *pvc.Spec.StorageClassName,
				ClaimRef: &corev1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1",
					Namespace: pvc.Namespace, Name: pvc.Name, UID: pvc.UID},
				PersistentVolumeSource: corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{
					Driver: provisioner, VolumeHandle: string(pvc.UID)}},
				NodeAffinity: &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
					MatchExpressions: []corev1.NodeSelectorRequirement{where},
				}}}},
			},
		}
		if err := c.Create(ctx, pv); err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
	}
	var pvs corev1.PersistentVolumeList
	if err := c.List(ctx, &pvs); err != nil {
		return err
	}
	for i := range pvs.Items {
		pv := &pvs.Items[i]
		if pv.Annotations["pv.kubernetes.io/provisioned-by"] == provisioner && pv.Status.Phase == corev1.VolumeReleased {
			if err := c.Delete(ctx, pv); client.IgnoreNotFound(err) != nil {
				return err
			}
		}
	}
	return nil
}

// StorageClass is a class the harness's provisioner provisions.
func StorageClass(name string) *storagev1.StorageClass {
	return &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Provisioner: provisioner,
		VolumeBindingMode: ptr.To(storagev1.VolumeBindingWaitForFirstConsumer),
		ReclaimPolicy:     ptr.To(corev1.PersistentVolumeReclaimDelete)}
}
