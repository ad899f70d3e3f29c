package tier

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/internal/desired"
)

// volumeAct is what happens to one of a local tier's PersistentVolumes.
type volumeAct int

const (
	// volumeKeep: wanted and as wanted, being deleted, or in a StorageClass Strata does not own.
	volumeKeep volumeAct = iota
	// volumeCreate: wanted and missing. The caller first checks that no volume of the name
	// exists outside the tier (the tier's cache holds only its own).
	volumeCreate
	// volumeUpdate: unused, and what differs can change in place.
	volumeUpdate
	// volumeRecreate: unused, and what differs cannot change in place: deleted now, created
	// afresh once gone (its deletion requeues the tier).
	volumeRecreate
	// volumeHoldBack: differs, but a claim uses it: what it offers does not change under the
	// claim's feet. Kept and reported.
	volumeHoldBack
	// volumeRetain: no longer wanted, but a claim uses it. Kept and reported.
	volumeRetain
	// volumeDelete: no longer wanted, and nothing uses it.
	volumeDelete
)

// volumeAction is one decision about one volume: want the volume the tier wants (nil for one
// no longer wanted), cur the one that exists (nil for one missing), why the fields that differ
// (update, recreate, hold back) or why it is no longer wanted (retain, delete).
type volumeAction struct {
	act       volumeAct
	want, cur *corev1.PersistentVolume
	why       string
}

// localVolumes is what a local tier's volume decisions are made from, all of it read before:
// the volumes the tier wants on its matched nodes, the ones it has, whether its StorageClass is
// one Strata cannot own, and the nodes, selector and paths that say why a volume is unwanted.
type localVolumes struct {
	want          []*corev1.PersistentVolume
	have          map[string]*corev1.PersistentVolume
	classConflict bool
	nodes         map[string]corev1.Node
	selector      labels.Selector
	paths         map[string]bool
}

// diff decides what happens to each volume: the wanted ones in the order wanted, then the
// unwanted ones by name. It reads nothing and writes nothing (syncLocal does both), so every
// case is a row of a table test (tier_diff_test.go).
func (l localVolumes) diff() []volumeAction {
	var out []volumeAction
	wanted := map[string]bool{}
	for _, want := range l.want {
		wanted[want.Name] = true
		cur := l.have[want.Name]
		if cur == nil {
			if !l.classConflict { // no volumes in a class Strata does not own
				out = append(out, volumeAction{act: volumeCreate, want: want})
			}
			continue
		}
		mutable, immutable := volumeDrift(cur, want)
		a := volumeAction{want: want, cur: cur}
		switch {
		case len(mutable)+len(immutable) == 0 || l.classConflict || !cur.DeletionTimestamp.IsZero():
			a.act = volumeKeep
		case volumeUse(cur) != "":
			a.act, a.why = volumeHoldBack, strings.Join(append(mutable, immutable...), ", ")
		case len(immutable) > 0:
			a.act, a.why = volumeRecreate, strings.Join(immutable, ", ")
		default:
			a.act = volumeUpdate
		}
		out = append(out, a)
	}
	for _, pv := range sortedVolumes(l.have) {
		switch {
		case wanted[pv.Name]:
		case volumeUse(pv) != "":
			out = append(out, volumeAction{act: volumeRetain, cur: pv, why: l.unwanted(pv)})
		case pv.DeletionTimestamp.IsZero():
			out = append(out, volumeAction{act: volumeDelete, cur: pv, why: l.unwanted(pv)})
		}
	}
	return out
}

// unwanted says why the tier no longer wants a volume it made.
func (l localVolumes) unwanted(pv *corev1.PersistentVolume) string {
	node, path := pv.Annotations[desired.AnnotationNode], pv.Annotations[desired.AnnotationPath]
	n, ok := l.nodes[node]
	switch {
	case !ok:
		return fmt.Sprintf("node %s is gone", node)
	case !l.selector.Matches(labels.Set(n.Labels)):
		return fmt.Sprintf("node %s no longer matches spec.local.nodeSelector", node)
	case !l.paths[path]:
		return fmt.Sprintf("path %s is no longer in spec.local.paths", path)
	}
	return "the tier no longer wants it"
}

// localOutcome is what the volume decisions came to, for the tier's condition.
type localOutcome struct {
	conflict   string // why the StorageClass is not Strata's; "" when it is
	matched    int    // nodes the selector matches
	problems   []string
	recreating int
	volumes    int // wanted volumes that exist
	paths      int
}

// condition sets the tier's Ready condition from the outcome, the first problem in this order
// deciding: the class, the nodes, a volume of another's, volumes being made afresh.
func (o localOutcome) condition(res *tierResult, t *v1alpha1.StorageTier, sel labels.Selector) {
	switch {
	case o.conflict != "":
		res.set(metav1.ConditionFalse, v1alpha1.ReasonStorageClassConflict, "%s", o.conflict)
	case o.matched == 0:
		res.set(metav1.ConditionFalse, v1alpha1.ReasonNoMatchingNodes, "no node matches spec.local.nodeSelector (%s)", selectorText(sel))
	case len(o.problems) > 0:
		res.set(metav1.ConditionFalse, v1alpha1.ReasonPersistentVolumeConflict, "%s", strings.Join(o.problems, "; "))
	case o.recreating > 0:
		res.set(metav1.ConditionFalse, v1alpha1.ReasonProgressing,
			"%d unused PersistentVolume(s) whose node affinity, path or volume mode changed are being created afresh", o.recreating)
	default:
		res.set(metav1.ConditionTrue, v1alpha1.ReasonAvailable, "StorageClass %q and %d PersistentVolume(s): %d node(s) × %d path(s)",
			t.Spec.StorageClassName, o.volumes, o.matched, o.paths)
	}
}
