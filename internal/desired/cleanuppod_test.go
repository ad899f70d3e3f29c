package desired

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// releasedVolume is pv as the PersistentVolume controller leaves it when its claim is deleted.
func releasedVolume(pv *corev1.PersistentVolume) *corev1.PersistentVolume {
	pv = pv.DeepCopy()
	pv.Spec.ClaimRef = &corev1.ObjectReference{Kind: "PersistentVolumeClaim", Namespace: "kafka", Name: "data-0-sensors-broker-0",
		UID: "5a0c1e2f-0000-4000-8000-000000000001"}
	pv.Status.Phase = corev1.VolumeReleased
	return pv
}

func TestCleanupPod(t *testing.T) {
	tier := tierLocal()
	pv := releasedVolume(PersistentVolumes(tier, tierNodes[:1])[0])
	pod := CleanupPod(tier, pv, "strata-system", "busybox:1.37.0", 90*time.Second)

	if pod.Spec.NodeName != "worker-b" || pod.Annotations[AnnotationVolume] != pv.Name || pod.Annotations[AnnotationClaimUID] != string(pv.Spec.ClaimRef.UID) {
		t.Errorf("node %q, annotations %v", pod.Spec.NodeName, pod.Annotations)
	}
	if hp := pod.Spec.Volumes[0].HostPath; hp == nil || hp.Path != pv.Spec.Local.Path {
		t.Errorf("hostPath %+v, want %s", hp, pv.Spec.Local.Path)
	}
	if *pod.Spec.ActiveDeadlineSeconds != 90 {
		t.Errorf("activeDeadlineSeconds %d, want 90", *pod.Spec.ActiveDeadlineSeconds)
	}
	if errs := validation.IsDNS1123Subdomain(pod.Name); len(errs) > 0 || len(pod.Name) > 63 {
		t.Errorf("name %q: %v", pod.Name, errs)
	}
	// A new claim's data is a new pod: one that wiped the previous claim's is never taken for it.
	other := pv.DeepCopy()
	other.Spec.ClaimRef.UID = "5a0c1e2f-0000-4000-8000-000000000002"
	if CleanupPodName(pv.Name, pv.Spec.ClaimRef.UID) == CleanupPodName(other.Name, other.Spec.ClaimRef.UID) {
		t.Error("two claims of one volume give the same cleanup pod name")
	}
	for _, v := range []string{pod.Labels[LabelVolume], pod.Labels[LabelTier]} {
		if errs := validation.IsValidLabelValue(v); len(errs) > 0 {
			t.Errorf("label value %q: %v", v, errs)
		}
	}
}

// TestCleanupScript runs the cleanup script with the system's sh on a directory holding plain,
// hidden and nested files, and checks that it leaves the directory empty, and the directory.
func TestCleanupScript(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	dir := t.TempDir()
	for _, p := range []string{"a", ".hidden", "..double", "...triple", "-dash", "d/e/f", ".d/g", "with space"} {
		path := filepath.Join(dir, p)
		if err := exec.Command("mkdir", "-p", filepath.Dir(path)).Run(); err != nil {
			t.Fatal(err)
		}
		if err := exec.Command("touch", path).Run(); err != nil {
			t.Fatal(err)
		}
	}
	script := strings.ReplaceAll(CleanupScript, cleanupMount, dir)
	out, err := exec.Command(sh, "-c", script).CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	left, _ := exec.Command("ls", "-A", dir).Output()
	if len(strings.TrimSpace(string(left))) > 0 {
		t.Errorf("left behind: %s", left)
	}
}
