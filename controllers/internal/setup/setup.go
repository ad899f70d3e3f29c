package setup

import (
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// FieldOwner is the server-side apply field manager of everything the operator writes.
const FieldOwner = "strata"

// Instruments let tests watch the controllers work: every reconciler and event recorder passes
// through them once, at setup, so that a test can wait on a finished reconcile and see what it
// read, wrote and recorded, instead of sleeping and hoping nothing came late. Production has none.
type Instruments struct {
	Reconciler func(controller string, r reconcile.Reconciler) reconcile.Reconciler
	Recorder   func(r events.EventRecorder) events.EventRecorder
}

// Wrap is r as the instruments see it.
func (i Instruments) Wrap(controller string, r reconcile.Reconciler) reconcile.Reconciler {
	if i.Reconciler == nil {
		return r
	}
	return i.Reconciler(controller, r)
}

// WrapRecorder is rec as the instruments see it.
func (i Instruments) WrapRecorder(rec events.EventRecorder) events.EventRecorder {
	if i.Recorder == nil || rec == nil {
		return rec
	}
	return i.Recorder(rec)
}
