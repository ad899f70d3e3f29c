package tier_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/controllers/internal/envtestutil"
	"github.com/strata-dev/strata/internal/desired"
	"github.com/strata-dev/strata/internal/testutil"
)

// TestTierNodeLoss binds three volumes of a local tier to claims, then loses two nodes: one
// deleted, one NotReady beyond the grace period. The tier names both claims (VolumesLost and
// status.lostClaims) and deletes none; opted in, it deletes exactly those two; the claim on the
// healthy node stays. A pipeline whose claims are lost says so in StorageReady.
func TestTierNodeLoss(t *testing.T) {
	o := envtestutil.StartOperator(t)
	ctx := context.Background()
	c := o.C
	const ns = "team-loss"
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"loss-1", "loss-2", "loss-3"} {
		tierCreateNode(t, c, n, map[string]string{"example.com/loss": "true"})
		lossSetReady(t, c, n, corev1.ConditionTrue, time.Now())
	}
	tier := tierLocal("loss", "strata-loss", map[string]string{"example.com/loss": "true"}, "10Gi", "/mnt/a")
	tier.Spec.Local.NodeLoss = &v1alpha1.NodeLoss{GracePeriod: &metav1.Duration{Duration: 30 * time.Second}}
	if err := c.Create(ctx, tier); err != nil {
		t.Fatal(err)
	}
	tierWaitStatus(t, c, tier, 3, "30Gi", metav1.ConditionTrue, v1alpha1.ReasonAvailable)
	claims := map[string]*corev1.PersistentVolumeClaim{}
	for i, n := range []string{"loss-1", "loss-2", "loss-3"} {
		claims[n] = lossBind(t, c, desired.PersistentVolumeName("loss", n, "/mnt/a"), ns, fmt.Sprintf("data-%d", i))
	}
	envtestutil.WaitFor(t, c, tier, func() error {
		return envtestutil.Condition(tier.Status.Conditions, v1alpha1.ConditionVolumesLost, metav1.ConditionFalse, v1alpha1.ReasonNoneLost)
	})

	t.Run("a deleted node and a node NotReady beyond the grace period", func(t *testing.T) {
		if err := c.Delete(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "loss-2"}}); err != nil {
			t.Fatal(err)
		}
		lossSetReady(t, c, "loss-3", corev1.ConditionUnknown, time.Now().Add(-time.Minute))
		// The node's status is not watched: a label change brings the tier round at once.
		tierLabelNode(t, c, "loss-3", "example.com/touched", "1")
		envtestutil.WaitFor(t, c, tier, func() error {
			if err := envtestutil.Condition(tier.Status.Conditions, v1alpha1.ConditionVolumesLost, metav1.ConditionTrue, v1alpha1.ReasonNodeLost); err != nil {
				return err
			}
			if got, want := fmt.Sprint(tier.Status.LostClaims), fmt.Sprintf("[%s/data-1 %s/data-2]", ns, ns); got != want {
				return fmt.Errorf("lostClaims %s, want %s", got, want)
			}
			return nil
		})
		msg := apimetaMessage(tier, v1alpha1.ConditionVolumesLost)
		for _, s := range []string{"node loss-2 is deleted", "node loss-3 is NotReady since", "spec.local.nodeLoss.deleteClaims does it"} {
			if !strings.Contains(msg, s) {
				t.Errorf("VolumesLost message does not say %q: %q", s, msg)
			}
		}
		for n, pvc := range claims {
			if lossClaimDeleted(t, c, pvc) {
				t.Errorf("claim %s (node %s) deleted without spec.local.nodeLoss.deleteClaims", pvc.Name, n)
			}
		}
	})

	t.Run("deleteClaims deletes only the lost volumes' claims", func(t *testing.T) {
		patched := tier.DeepCopy()
		patched.Spec.Local.NodeLoss.DeleteClaims = true
		if err := c.Patch(ctx, patched, client.MergeFrom(tier)); err != nil {
			t.Fatal(err)
		}
		for _, n := range []string{"loss-2", "loss-3"} {
			testutil.Eventually(t, time.Minute, fmt.Sprintf("claim %s (node %s) to be deleted", claims[n].Name, n), func() error {
				if !lossClaimDeleted(t, c, claims[n]) {
					return fmt.Errorf("not deleted")
				}
				return nil
			})
		}
		tierWaitEvent(t, c, "loss", "PersistentVolumeClaimDeleted", ns+"/data-1")
		if lossClaimDeleted(t, c, claims["loss-1"]) {
			t.Error("the claim on the healthy node was deleted")
		}
	})
}

// TestPipelineNodeLoss: a claim of the pipeline's namespace bound to a sample tier's volume on a
// deleted node makes StorageReady False, NodeLost, naming it.
func TestPipelineNodeLoss(t *testing.T) {
	o := envtestutil.StartOperator(t)
	ctx := context.Background()
	c := o.C
	ns, tiers := o.CreateSamples(t)
	tier := &v1alpha1.StorageTier{ObjectMeta: metav1.ObjectMeta{Name: tiers["nvme-local"]}}
	envtestutil.WaitFor(t, c, tier, func() error {
		if tier.Status.PersistentVolumes == 0 {
			return fmt.Errorf("no volumes yet")
		}
		return nil
	})
	node := fmt.Sprintf("%s-%s-n0", ns, tier.Name[:4])
	lossBind(t, c, desired.PersistentVolumeName(tier.Name, node, tier.Spec.Local.Paths[0]), ns, "data-0-sensors-broker-0")
	if err := c.Delete(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: node}}); err != nil {
		t.Fatal(err)
	}
	p := &v1alpha1.AnalyticsPipeline{ObjectMeta: metav1.ObjectMeta{Name: "sensors", Namespace: ns}}
	envtestutil.WaitFor(t, c, p, func() error {
		if err := envtestutil.Condition(p.Status.Conditions, v1alpha1.ConditionStorageReady, metav1.ConditionFalse, v1alpha1.ReasonNodeLost); err != nil {
			return err
		}
		if msg := envtestutil.Meta(p, v1alpha1.ConditionStorageReady).Message; !strings.Contains(msg, "data-0-sensors-broker-0 (tier "+tier.Name+")") {
			return fmt.Errorf("StorageReady message does not name the claim: %q", msg)
		}
		return nil
	})
}

// lossSetReady sets a node's Ready condition, as the kubelet or the node lifecycle controller would.
func lossSetReady(t *testing.T, c client.Client, name string, status corev1.ConditionStatus, since time.Time) {
	t.Helper()
	n := &corev1.Node{}
	if err := c.Get(context.Background(), client.ObjectKey{Name: name}, n); err != nil {
		t.Fatal(err)
	}
	n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: status,
		LastHeartbeatTime: metav1.NewTime(since), LastTransitionTime: metav1.NewTime(since)}}
	if err := c.Status().Update(context.Background(), n); err != nil {
		t.Fatal(err)
	}
}

// lossBind creates a claim and binds the volume to it, as the PersistentVolume controller would.
func lossBind(t *testing.T, c client.Client, pvName, ns, claim string) *corev1.PersistentVolumeClaim {
	t.Helper()
	ctx := context.Background()
	pvc := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: claim, Namespace: ns},
		Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			VolumeName: pvName,
			Resources:  corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}},
	}
	if err := c.Create(ctx, pvc); err != nil {
		t.Fatal(err)
	}
	pv := &corev1.PersistentVolume{}
	if err := c.Get(ctx, client.ObjectKey{Name: pvName}, pv); err != nil {
		t.Fatal(err)
	}
	pv.Spec.ClaimRef = &corev1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1", Namespace: ns, Name: claim, UID: pvc.UID}
	if err := c.Update(ctx, pv); err != nil {
		t.Fatal(err)
	}
	pv.Status.Phase = corev1.VolumeBound
	if err := c.Status().Update(ctx, pv); err != nil {
		t.Fatal(err)
	}
	return pvc
}

// lossClaimDeleted says whether a claim is gone or being deleted (the API server's
// pvc-protection finalizer keeps it until the controller-manager, absent here, removes it).
func lossClaimDeleted(t *testing.T, c client.Client, pvc *corev1.PersistentVolumeClaim) bool {
	t.Helper()
	got := &corev1.PersistentVolumeClaim{}
	err := c.Get(context.Background(), client.ObjectKeyFromObject(pvc), got)
	if client.IgnoreNotFound(err) != nil {
		t.Fatal(err)
	}
	return err != nil || !got.DeletionTimestamp.IsZero()
}

func apimetaMessage(tier *v1alpha1.StorageTier, condType string) string {
	for _, c := range tier.Status.Conditions {
		if c.Type == condType {
			return c.Message
		}
	}
	return ""
}
