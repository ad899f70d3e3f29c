package status

import (
	"context"
	"fmt"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/strata-dev/strata/api/v1alpha1"
)

// Conditions collects the conditions of one reconcile. Setting them through meta's helpers keeps
// lastTransitionTime when the status does not change, so an unchanged reconcile writes nothing.
type Conditions struct {
	List       *[]metav1.Condition
	Generation int64
}

func (c Conditions) Set(condType string, status metav1.ConditionStatus, reason, message string) {
	meta.SetStatusCondition(c.List, metav1.Condition{
		Type:               condType,
		Status:             status,
		Reason:             reason,
		Message:            Bounded(message, MaxConditionMessage),
		ObservedGeneration: c.Generation,
	})
}

// The API's limits on what a message may hold, in bytes: a condition's message (metav1.Condition,
// maxLength 32768 in the CRD) and an event's note (events.k8s.io/v1, 1 KiB). Some messages
// carry an upstream operator's own text, unbounded: the Spark operator's errorMessage of a
// failed submission is spark-submit's whole output, Java stack traces included. One such message
// over the limit made the API server refuse the whole status patch, so the pipeline's status
// (observedGeneration, every condition) stayed as it was; the upgrade test found it
// (docs/upgrade.md).
const (
	MaxConditionMessage = 32768
	MaxEventNote        = 1024
)

// TruncatedMark ends a message cut to its limit.
const TruncatedMark = " ... (truncated)"

// Bounded is msg cut to at most limit bytes, on a UTF-8 boundary, marked as cut.
func Bounded(msg string, limit int) string {
	if len(msg) <= limit {
		return msg
	}
	cut := limit - len(TruncatedMark)
	for cut > 0 && !utf8.RuneStart(msg[cut]) {
		cut--
	}
	return msg[:cut] + TruncatedMark
}

func (c Conditions) IsTrue(condType string) bool {
	return meta.IsStatusConditionTrue(*c.List, condType)
}

// AnnounceTransitions records an event for every condition whose status changed, and only
// then: a steady state produces no events. A condition that first appears as Progressing
// records none either: nothing has happened yet (its owner was just created, or its child's
// operator has not answered), and a new pipeline would otherwise post five Warning events, half
// of its writes at creation (docs/performance.md). Its first real state, or a later return to
// Progressing, is announced as before.
func AnnounceTransitions(rec events.EventRecorder, obj runtime.Object, before, after []metav1.Condition) {
	if rec == nil {
		return
	}
	for _, cond := range after {
		old := meta.FindStatusCondition(before, cond.Type)
		if old != nil && old.Status == cond.Status && old.Reason == cond.Reason {
			continue
		}
		if old == nil && cond.Reason == v1alpha1.ReasonProgressing {
			continue
		}
		eventType := corev1.EventTypeNormal
		if cond.Status == metav1.ConditionFalse {
			eventType = corev1.EventTypeWarning
		}
		rec.Eventf(obj, nil, eventType, cond.Reason, cond.Type, "%s",
			Bounded(fmt.Sprintf("%s=%s: %s", cond.Type, cond.Status, cond.Message), MaxEventNote))
	}
}

// Patch writes the status subresource once, and not at all when it did not change.
// A merge patch carries only what changed; the operator is the status' only writer.
func Patch(ctx context.Context, c client.Client, obj client.Object, before client.Object,
	oldStatus, newStatus any) error {
	if equality.Semantic.DeepEqual(oldStatus, newStatus) {
		return nil
	}
	return c.Status().Patch(ctx, obj, client.MergeFrom(before))
}

// Remove drops a condition that no longer applies (autoscaling switched off).
func (c Conditions) Remove(condType string) {
	kept := (*c.List)[:0]
	for _, cond := range *c.List {
		if cond.Type != condType {
			kept = append(kept, cond)
		}
	}
	*c.List = kept
}
