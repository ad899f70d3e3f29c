package pipeline

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/controllers/internal/setup"
	"github.com/strata-dev/strata/internal/desired"
	"github.com/strata-dev/strata/internal/ssa"
)

// leftToOthers are the fields of a child that Strata sets but leaves to another field manager
// that changed them: labels that only describe the object. Nothing reads them — Strata finds
// its children by SelectorLabels (instance, managed-by) and their owner reference, the
// upstream operators by strimzi.io/cluster and the objects' names — so a user's or a tool's
// own value harms nothing, and taking it back would start a tug of war with that tool.
// Everything else Strata applies it must own: the specs carry the plan (a changed replica
// count or resource is a plan not carried out, or a volume Strata does not account for), the
// selector labels and owner references tie a child to its pipeline, and Strata's annotations
// (strimzi.io/pause-reconciliation, the Kafka cluster ID) guard retained data.
var leftToOthers = []string{desired.LabelName, desired.LabelComponent, desired.LabelPartOf}

// maxNamed is how many changed fields a ChildrenAsApplied message names.
const maxNamed = 3

// childrenModified compares each desired child with the live one for fields another field
// manager now holds with another value (ssa.Changes), before the apply step takes them back
// (Strata applies with force). Fields Strata may leave are dropped from the desired object, so
// that the other manager keeps them. It sets ChildrenAsApplied.
func (r *Reconciler) childrenModified(ctx context.Context, s *scope) error {
	if !s.planned {
		return nil
	}
	// A field another manager holds is measured against what Strata last applied of the child
	// (its Applier remembers), so that Strata's own next step is no one's change: a scale-up
	// changes the replicas ECK's update took over with the old value; and a human's raised
	// broker count is a scale-down for Strata, which it carries out one broker at a time
	// (plan.Compute), with plans other than the status' meanwhile. After a restart Strata
	// remembers nothing: then the desired child is the measure, only while Strata applies what
	// it applied last (the spec carried out, the plan of the status).
	settled := s.pipeline.Status.ObservedGeneration == s.pipeline.Generation && samePlan(s.pipeline.Status.Plan, &s.plan)
	var taken, left []string
	for _, obj := range s.desired {
		key := ssa.KeyOf(obj)
		live := s.observed[key]
		if !ssa.HeldByOthers(live, setup.FieldOwner) {
			continue // no other manager holds a field: nothing to measure, nor to inflate
		}
		describe := func(c ssa.Change) string {
			return fmt.Sprintf("%s %s %s (by %s)", obj.GetKind(), obj.GetName(), shortPath(c.Path.String()), c.Manager)
		}
		// Descriptive labels: measured against what Strata would apply now, so that a label
		// left once is left for as long as the other manager holds it.
		for _, c := range ssa.Changes(live, obj, setup.FieldOwner) {
			if names, ok := ssa.FieldNames(c.Path); ok && leavable(names) {
				unstructured.RemoveNestedField(obj.Object, names...)
				left = append(left, describe(c))
			}
		}
		measure, known := r.Applier.Applied(key)
		if !known {
			if !settled {
				continue
			}
			measure = obj
		}
		for _, c := range ssa.Changes(live, measure, setup.FieldOwner) {
			if names, ok := ssa.FieldNames(c.Path); !ok || !leavable(names) {
				taken = append(taken, describe(c))
			}
		}
	}
	if len(taken)+len(left) > 0 {
		log.FromContext(ctx).V(1).Info("children's fields held by another field manager", "takenBack", taken, "left", left, "settled", settled)
	}
	key := client.ObjectKeyFromObject(s.pipeline)
	if len(taken) > 0 {
		msg := "fields Strata must own changed by another field manager, applied again with Strata's values: " + named(taken)
		if len(left) > 0 {
			msg += "; left to their manager: " + named(left)
		}
		r.takenBack.set(key, s.pipeline.Generation, msg)
	}
	// Said until the spec changes: the change was undone, but someone made it. Remembered here
	// rather than read back from the status, which the cache may not hold yet when the next
	// reconcile starts; the status is the memory across a restart.
	said, sayTaken := r.takenBack.get(key, s.pipeline.Generation)
	if prev := meta.FindStatusCondition(*s.conds.List, v1alpha1.ConditionChildrenAsApplied); !sayTaken && prev != nil &&
		prev.Reason == v1alpha1.ReasonTakenBack && prev.ObservedGeneration == s.pipeline.Generation {
		said, sayTaken = prev.Message, true
	}
	switch {
	case sayTaken:
		s.conds.Set(v1alpha1.ConditionChildrenAsApplied, metav1.ConditionFalse, v1alpha1.ReasonTakenBack, said)
	case len(left) > 0:
		s.conds.Set(v1alpha1.ConditionChildrenAsApplied, metav1.ConditionTrue, v1alpha1.ReasonLeftToManager,
			"descriptive labels held by another field manager with its own value, left to it: "+named(left))
	default:
		s.conds.Set(v1alpha1.ConditionChildrenAsApplied, metav1.ConditionTrue, v1alpha1.ReasonAsApplied,
			"every field Strata applies holds Strata's value")
	}
	return nil
}

// leavable says whether the field path names is a top-level label in leftToOthers.
func leavable(names []string) bool {
	return len(names) == 3 && names[0] == "metadata" && names[1] == "labels" && slices.Contains(leftToOthers, names[2])
}

// named joins the first maxNamed of what, saying how many more there are.
func named(what []string) string {
	if len(what) <= maxNamed {
		return strings.Join(what, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(what[:maxNamed], ", "), len(what)-maxNamed)
}

// samePlan compares plans by their JSON: the status' plan came back from the API server, where
// an empty list of the computed plan is absent, which a deep comparison would call a difference.
func samePlan(a, b *v1alpha1.Plan) bool {
	if a == nil || b == nil {
		return false
	}
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	return errA == nil && errB == nil && bytes.Equal(ja, jb)
}

// shortPath cuts a field path that names a whole list element by its value (a set's v: key) to
// a length a message can carry.
func shortPath(p string) string {
	const limit = 160
	if len(p) <= limit {
		return p
	}
	return p[:limit] + "..."
}

// takenBack is what ChildrenAsApplied last said was taken back, per pipeline: its generation
// and message. The zero value is ready.
type takenBack struct {
	mu   sync.Mutex
	said map[client.ObjectKey]taken
}

type taken struct {
	generation int64
	message    string
}

func (t *takenBack) set(key client.ObjectKey, generation int64, message string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.said == nil {
		t.said = map[client.ObjectKey]taken{}
	}
	t.said[key] = taken{generation, message}
}

// get returns the message said for key's generation.
func (t *takenBack) get(key client.ObjectKey, generation int64) (string, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	s, ok := t.said[key]
	return s.message, ok && s.generation == generation
}

func (t *takenBack) forget(key client.ObjectKey) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.said, key)
}
