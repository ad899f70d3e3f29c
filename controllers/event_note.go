package controllers

import "unicode/utf8"

// noteLimit is the longest note the API server accepts in an event (events.k8s.io/v1: note,
// "can have at most 1024 characters"; kubernetes v1.36.3 pkg/apis/core/validation/events.go,
// NoteLengthLimit). A longer one is refused and the event lost, with only a log line in the
// manager: a condition message that names many pods or fields is longer.
const noteLimit = 1024

// eventNote cuts note to noteLimit bytes at a character boundary, marked with " ..." as
// kube-scheduler marks its own (pkg/scheduler/schedule_one.go, truncateMessage). The condition
// keeps the whole message.
func eventNote(note string) string {
	if len(note) <= noteLimit {
		return note
	}
	const suffix = " ..."
	cut := noteLimit - len(suffix)
	for cut > 0 && !utf8.RuneStart(note[cut]) {
		cut--
	}
	return note[:cut] + suffix
}
