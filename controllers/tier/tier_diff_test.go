package tier

import (
	"fmt"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/internal/desired"
	"github.com/strata-dev/strata/internal/testutil/gen"
)

// TestLocalVolumesDiff: every decision about a local tier's volumes, from what exists, as rows.
func TestLocalVolumesDiff(t *testing.T) {
	tier := gen.NVMeTier(gen.SetLocal(map[string]string{"role": "storage"}, "100Gi", "/mnt/a"))
	storage := func(name string) corev1.Node {
		return corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"role": "storage"}}}
	}
	nodes := []corev1.Node{storage("n1"), storage("n2")}
	want := desired.PersistentVolumes(&tier, nodes)
	// on n1 and n2, and volumes of the same tier on nodes or paths it no longer wants.
	n1, n2 := want[0], want[1]
	elsewhere := func(node, path string) *corev1.PersistentVolume {
		pv := desired.PersistentVolumes(&tier, []corev1.Node{storage(node)})[0].DeepCopy()
		pv.Name = desired.PersistentVolumeName(tier.Name, node, path)
		pv.Annotations[desired.AnnotationPath] = path
		pv.Spec.Local.Path = path
		return pv
	}
	with := func(pv *corev1.PersistentVolume, change ...func(*corev1.PersistentVolume)) *corev1.PersistentVolume {
		pv = pv.DeepCopy()
		for _, c := range change {
			c(pv)
		}
		return pv
	}
	relabelled := func(pv *corev1.PersistentVolume) { pv.Labels[desired.LabelTier] = "old" }
	movedPath := func(pv *corev1.PersistentVolume) { pv.Spec.Local.Path = "/mnt/old" }
	claimed := func(pv *corev1.PersistentVolume) {
		pv.Spec.ClaimRef = &corev1.ObjectReference{Namespace: "ns", Name: "data-0"}
		pv.Status.Phase = corev1.VolumeBound
	}
	deleting := func(pv *corev1.PersistentVolume) { now := metav1.Now(); pv.DeletionTimestamp = &now }
	relabelledNode := map[string]corev1.Node{"n1": nodes[0], "n2": nodes[1],
		"n4": {ObjectMeta: metav1.ObjectMeta{Name: "n4", Labels: map[string]string{"role": "compute"}}}}

	for _, tc := range []struct {
		name          string
		have          []*corev1.PersistentVolume
		classConflict bool
		nodes         map[string]corev1.Node // nil: n1 and n2
		want          []string
	}{
		{name: "none yet: both created", want: []string{"create n1", "create n2"}},
		{name: "both as wanted: kept", have: []*corev1.PersistentVolume{n1, n2}, want: []string{"keep n1", "keep n2"}},
		{name: "a label changed, unused: updated in place",
			have: []*corev1.PersistentVolume{with(n1, relabelled), n2}, want: []string{"update n1", "keep n2"}},
		{name: "its path changed, unused: made afresh",
			have: []*corev1.PersistentVolume{with(n1, movedPath), n2}, want: []string{"recreate n1 (path)", "keep n2"}},
		{name: "changed but claimed: held back, named",
			have: []*corev1.PersistentVolume{with(n1, movedPath, relabelled, claimed), n2},
			want: []string{"holdBack n1 (labels, path)", "keep n2"}},
		{name: "changed but being deleted: kept",
			have: []*corev1.PersistentVolume{with(n1, movedPath, deleting), n2}, want: []string{"keep n1", "keep n2"}},
		{name: "a class Strata cannot own: nothing made, nothing changed",
			have: []*corev1.PersistentVolume{with(n1, relabelled)}, classConflict: true, want: []string{"keep n1"}},
		{name: "its node gone, unused: deleted",
			have: []*corev1.PersistentVolume{n1, n2, elsewhere("n3", "/mnt/a")},
			want: []string{"keep n1", "keep n2", "delete n3 (node n3 is gone)"}},
		{name: "its node gone, claimed: retained",
			have: []*corev1.PersistentVolume{n1, n2, with(elsewhere("n3", "/mnt/a"), claimed)},
			want: []string{"keep n1", "keep n2", "retain n3 (node n3 is gone)"}},
		{name: "its node no longer selected",
			have: []*corev1.PersistentVolume{n1, n2, elsewhere("n4", "/mnt/a")}, nodes: relabelledNode,
			want: []string{"keep n1", "keep n2", "delete n4 (node n4 no longer matches spec.local.nodeSelector)"}},
		{name: "its path dropped from the spec",
			have: []*corev1.PersistentVolume{n1, n2, elsewhere("n1", "/mnt/b")},
			want: []string{"keep n1", "keep n2", "delete n1:/mnt/b (path /mnt/b is no longer in spec.local.paths)"}},
		{name: "unwanted and already being deleted: nothing",
			have: []*corev1.PersistentVolume{n1, n2, with(elsewhere("n3", "/mnt/a"), deleting)}, want: []string{"keep n1", "keep n2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			have := map[string]*corev1.PersistentVolume{}
			for _, pv := range tc.have {
				have[pv.Name] = pv
			}
			byName := tc.nodes
			if byName == nil {
				byName = map[string]corev1.Node{"n1": nodes[0], "n2": nodes[1]}
			}
			sel, err := desired.NodeSelector(&tier)
			if err != nil {
				t.Fatal(err)
			}
			l := localVolumes{want: want, have: have, classConflict: tc.classConflict, nodes: byName, selector: sel,
				paths: map[string]bool{"/mnt/a": true}}
			var got []string
			for _, a := range l.diff() {
				got = append(got, describe(a))
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("decisions\n got %q\nwant %q", got, tc.want)
			}
		})
	}
}

// describe is a decision as a row shows it: the act, the volume by node (and path when not the
// tier's), and why.
func describe(a volumeAction) string {
	pv := a.cur
	if pv == nil {
		pv = a.want
	}
	where := pv.Annotations[desired.AnnotationNode]
	if p := pv.Annotations[desired.AnnotationPath]; p != "/mnt/a" {
		where += ":" + p
	}
	s := fmt.Sprintf("%s %s", [...]string{"keep", "create", "update", "recreate", "holdBack", "retain", "delete"}[a.act], where)
	if a.why != "" {
		s += " (" + a.why + ")"
	}
	return s
}

// TestLocalOutcomeCondition: the first problem decides the tier's condition, in order.
func TestLocalOutcomeCondition(t *testing.T) {
	tier := gen.NVMeTier(gen.SetLocal(map[string]string{"role": "storage"}, "100Gi", "/mnt/a"))
	for _, tc := range []struct {
		out    localOutcome
		reason string
	}{
		{localOutcome{conflict: "provisioner x", problems: []string{"p"}}, v1alpha1.ReasonStorageClassConflict},
		{localOutcome{matched: 0, problems: []string{"p"}}, v1alpha1.ReasonNoMatchingNodes},
		{localOutcome{matched: 2, problems: []string{"p"}, recreating: 1}, v1alpha1.ReasonPersistentVolumeConflict},
		{localOutcome{matched: 2, recreating: 1}, v1alpha1.ReasonProgressing},
		{localOutcome{matched: 2, volumes: 2, paths: 1}, v1alpha1.ReasonAvailable},
	} {
		var res tierResult
		tc.out.condition(&res, &tier, labels.Everything())
		if res.reason != tc.reason {
			t.Errorf("%+v: reason %s, want %s", tc.out, res.reason, tc.reason)
		}
	}
}
