package desired

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/strata-dev/strata/api/v1alpha1"
)

// What a volume cleanup pod carries: the volume it wipes and the claim that released it, so
// that a pod's success is only ever taken for that volume and that claim's data.
const (
	// ComponentVolumeCleanup is the LabelComponent of cleanup pods (their cache selects it).
	ComponentVolumeCleanup = "volume-cleanup"
	// LabelVolume names the volume a cleanup pod wipes (see LabelValue); AnnotationVolume holds
	// its name in full, AnnotationClaimUID the UID of the claim that released it.
	LabelVolume        = "strata.dev/volume"
	AnnotationVolume   = "strata.dev/volume"
	AnnotationClaimUID = "strata.dev/claim-uid"

	// cleanupMount is where the volume's path is mounted in the cleanup pod.
	cleanupMount = "/volume"
)

// PodGVK is the kind CleanupPod returns.
var PodGVK = corev1.SchemeGroupVersion.WithKind("Pod")

// CleanupScript deletes everything under the mount (hidden files included: the three globs are
// the POSIX way to match every name but . and ..; a glob matching nothing stays literal, which
// rm -f ignores) and fails unless the directory is then empty, so that a pod that succeeds has
// really wiped the volume. Only sh and rm are needed: any small image does.
const CleanupScript = `set -eu
cd ` + cleanupMount + `
rm -rf -- ./..?* ./.[!.]* ./*
if [ -n "$(ls -A .)" ]; then echo "` + cleanupMount + ` is not empty after rm" >&2; ls -A . >&2; exit 1; fi
echo "wiped"`

// CleanupPodName is the name of the pod that wipes volume pv after claim claimUID released it:
// stable, so that a restarted operator finds the pod it made, and new for each claim, so that
// a pod that wiped an earlier claim's data is never taken for this one's.
func CleanupPodName(pv string, claimUID types.UID) string {
	return "strata-wipe-" + tierHash(16, pv, string(claimUID))
}

// CleanupPod returns the pod that wipes a Released local volume of tier t, in namespace ns with
// image: pinned to the volume's node (nodeName: no scheduler, which would not place a pod on a
// node it deems full or unready the same way), the volume's path mounted from the host
// (type Directory: a missing disk fails the pod rather than create an empty directory), no
// service account token, and a restricted security context except for what deleting another
// user's files needs: uid 0 with only DAC_OVERRIDE and FOWNER (the data belongs to Kafka's,
// Elasticsearch's or Spark's uid), no privilege escalation, a read-only root filesystem and the
// runtime's seccomp profile. activeDeadlineSeconds makes the kubelet stop a wipe that hangs.
// It tolerates every taint: a node tainted after its volume was bound still gets it back.
// The tier owns it, so a deleted tier leaves no pod behind.
//
// This mirrors sig-storage-local-static-provisioner (pkg/deleter/deleter.go, jobcontroller.go):
// a Released volume's directory contents are deleted by a process or a job named after the
// volume, on its node, and only a successful cleanup makes the volume usable again.
func CleanupPod(t *v1alpha1.StorageTier, pv *corev1.PersistentVolume, ns, image string, timeout time.Duration) *corev1.Pod {
	claimUID := types.UID("")
	if pv.Spec.ClaimRef != nil {
		claimUID = pv.Spec.ClaimRef.UID
	}
	l := TierLabels(t)
	l[LabelComponent] = ComponentVolumeCleanup
	l[LabelVolume] = LabelValue(pv.Name)
	node := pv.Annotations[AnnotationNode]
	path := ""
	if pv.Spec.Local != nil {
		path = pv.Spec.Local.Path
	}
	return &corev1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: PodGVK.GroupVersion().String(), Kind: PodGVK.Kind},
		ObjectMeta: metav1.ObjectMeta{
			Name:      CleanupPodName(pv.Name, claimUID),
			Namespace: ns,
			Labels:    l,
			Annotations: map[string]string{AnnotationTier: t.Name, AnnotationVolume: pv.Name, AnnotationClaimUID: string(claimUID),
				AnnotationNode: node, AnnotationPath: path},
			OwnerReferences: []metav1.OwnerReference{TierOwnerReference(t)},
		},
		Spec: corev1.PodSpec{
			NodeName:                      node,
			RestartPolicy:                 corev1.RestartPolicyNever,
			ActiveDeadlineSeconds:         ptr.To(int64(timeout / time.Second)),
			TerminationGracePeriodSeconds: ptr.To(int64(5)),
			AutomountServiceAccountToken:  ptr.To(false),
			EnableServiceLinks:            ptr.To(false),
			Tolerations:                   []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
			SecurityContext: &corev1.PodSecurityContext{
				RunAsUser:      ptr.To(int64(0)),
				RunAsGroup:     ptr.To(int64(0)),
				RunAsNonRoot:   ptr.To(false),
				SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
			},
			Containers: []corev1.Container{{
				Name:    "wipe",
				Image:   image,
				Command: []string{"/bin/sh", "-c", CleanupScript},
				SecurityContext: &corev1.SecurityContext{
					Privileged:               ptr.To(false),
					AllowPrivilegeEscalation: ptr.To(false),
					ReadOnlyRootFilesystem:   ptr.To(true),
					Capabilities: &corev1.Capabilities{
						Drop: []corev1.Capability{"ALL"},
						Add:  []corev1.Capability{"DAC_OVERRIDE", "FOWNER"},
					},
				},
				// An estimate for sh and rm; not overridable.
				Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m"), corev1.ResourceMemory: resource.MustParse("16Mi")},
					Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("64Mi")},
				},
				VolumeMounts:             []corev1.VolumeMount{{Name: "volume", MountPath: cleanupMount}},
				TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
			}},
			Volumes: []corev1.Volume{{
				Name: "volume",
				VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{
					Path: path,
					Type: ptr.To(corev1.HostPathDirectory),
				}},
			}},
		},
	}
}
