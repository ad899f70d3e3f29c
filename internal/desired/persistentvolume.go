package desired

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"

	"github.com/strata-dev/strata/api/v1alpha1"
)

// volumeHashLen is the number of hex digits of a PersistentVolume name's hash: 48 bits, so that
// two of a tier's volumes get the same name with a probability below 10⁻⁵ even with tens of
// thousands of node and path pairs (8 digits would collide one time in ten at 30 000).
const volumeHashLen = 12

// PersistentVolumeName is the name of tier's volume at path on node: "strata-<tier>-<hash>",
// the hash of the three. Names are stable (a restarted operator, or a tier deleted and created
// again, finds its volumes), valid DNS subdomains of at most 253 characters (a long tier name
// is shortened; the hash still tells its volumes apart), and begin with the tier's name so that
// `kubectl get pv` reads well. The node and path are in the volume's annotations.
func PersistentVolumeName(tier, node, path string) string {
	suffix := "-" + tierHash(volumeHashLen, tier, node, path)
	prefix := "strata-" + tier
	if limit := validation.DNS1123SubdomainMaxLength - len(suffix); len(prefix) > limit {
		prefix = strings.TrimRight(prefix[:limit], "-.")
	}
	return prefix + suffix
}

// NodeSelector returns the selector of a local tier's nodes.
func NodeSelector(t *v1alpha1.StorageTier) (labels.Selector, error) {
	if t.Spec.Local == nil {
		return labels.Nothing(), nil
	}
	sel, err := metav1.LabelSelectorAsSelector(&t.Spec.Local.NodeSelector)
	if err != nil {
		return nil, fmt.Errorf("spec.local.nodeSelector: %w", err)
	}
	return sel, nil
}

// SelectNodes returns the nodes a local tier selects, by name, each once.
func SelectNodes(t *v1alpha1.StorageTier, nodes []corev1.Node) ([]corev1.Node, error) {
	sel, err := NodeSelector(t)
	if err != nil {
		return nil, err
	}
	var out []corev1.Node
	for _, n := range sortedNodes(nodes) {
		if sel.Matches(labels.Set(n.Labels)) {
			out = append(out, n)
		}
	}
	return out, nil
}

// PersistentVolumes returns a local tier's volumes on the given nodes — those SelectNodes
// returns: one per node and path, sorted by node and path. Each is a local volume of
// capacityPerPath in the tier's class, ReadWriteOnce, Filesystem, reclaim policy Retain, and
// usable only on its node (node affinity on the node's kubernetes.io/hostname label, else its
// name). Volumes carry no owner reference: the garbage collector would delete them with the
// tier, Bound ones included; the controller deletes only those no claim is bound to.
func PersistentVolumes(t *v1alpha1.StorageTier, nodes []corev1.Node) []*corev1.PersistentVolume {
	if t.Spec.Local == nil {
		return nil
	}
	paths := append([]string(nil), t.Spec.Local.Paths...)
	sort.Strings(paths)
	var out []*corev1.PersistentVolume
	seen := map[string]bool{}
	for _, n := range sortedNodes(nodes) {
		for _, path := range paths {
			if seen[n.Name+"\x00"+path] {
				continue
			}
			seen[n.Name+"\x00"+path] = true
			out = append(out, persistentVolume(t, n, path))
		}
	}
	return out
}

func persistentVolume(t *v1alpha1.StorageTier, n corev1.Node, path string) *corev1.PersistentVolume {
	l := TierLabels(t)
	l[LabelNode] = LabelValue(n.Name)
	return &corev1.PersistentVolume{
		TypeMeta: metav1.TypeMeta{APIVersion: PersistentVolumeGVK.GroupVersion().String(), Kind: PersistentVolumeGVK.Kind},
		ObjectMeta: metav1.ObjectMeta{
			Name:        PersistentVolumeName(t.Name, n.Name, path),
			Labels:      l,
			Annotations: map[string]string{AnnotationTier: t.Name, AnnotationNode: n.Name, AnnotationPath: path},
		},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: t.Spec.Local.CapacityPerPath.DeepCopy()},
			AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
			StorageClassName:              t.Spec.StorageClassName,
			VolumeMode:                    ptr.To(corev1.PersistentVolumeFilesystem),
			PersistentVolumeSource: corev1.PersistentVolumeSource{
				Local: &corev1.LocalVolumeSource{Path: path},
			},
			NodeAffinity: &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{
				NodeSelectorTerms: []corev1.NodeSelectorTerm{nodeTerm(n)}}},
		},
	}
}

// nodeTerm selects node n alone: by its kubernetes.io/hostname label, as the local volume static
// provisioner does, else by its name. A name longer than a label value may be (63 characters; a
// node name is a DNS subdomain of up to 253) goes in matchFields (metadata.name): as a label
// value the API server refuses the volume (found applying the tier-long golden case in the
// upstream harness). Shorter names stay label values, so that volumes made before keep the node
// affinity they have (immutable once set). The scheduler's volume binding matches both
// (k8s.io/component-helpers v0.36.3, scheduling/corev1/nodeaffinity: MatchFields on metadata.name).
func nodeTerm(n corev1.Node) corev1.NodeSelectorTerm {
	hostname := n.Labels[HostnameLabel]
	if hostname == "" && len(validation.IsValidLabelValue(n.Name)) == 0 {
		hostname = n.Name
	}
	if hostname != "" {
		return corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{{
			Key: HostnameLabel, Operator: corev1.NodeSelectorOpIn, Values: []string{hostname}}}}
	}
	return corev1.NodeSelectorTerm{MatchFields: []corev1.NodeSelectorRequirement{{
		Key: metav1.ObjectNameField, Operator: corev1.NodeSelectorOpIn, Values: []string{n.Name}}}}
}

// sortedNodes returns nodes sorted by name, each name once.
func sortedNodes(nodes []corev1.Node) []corev1.Node {
	out := make([]corev1.Node, 0, len(nodes))
	seen := map[string]bool{}
	for _, n := range nodes {
		if !seen[n.Name] {
			seen[n.Name] = true
			out = append(out, n)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
