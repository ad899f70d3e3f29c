package autoscale

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/strata-dev/strata/api/v1alpha1"
)

// maxSamples bounds a window's samples, so that the status stays small however short the
// interval and long the stabilisation window: the API rejects more.
const maxSamples = 64

// A window is a step function: each sample's recommendation holds from its time until the next
// sample's. Readings that recommend what the latest sample does are not added, so a steady
// signal keeps one sample however long it lasts, and the window over any span is exact.

// observe records a reading. A gap since the last reading (the metrics were missing, or the
// operator was away) starts the window afresh: nothing is known of what happened in between.
func observe(w *v1alpha1.AutoscalingWindow, up, down int32, now time.Time, gap, keep time.Duration) {
	now = now.Truncate(time.Second) // as the status stores times
	if w.LastReading != nil && now.Sub(w.LastReading.Time) > gap {
		w.Samples = nil
	}
	w.LastReading = &metav1.Time{Time: now}
	if n := len(w.Samples); n == 0 || w.Samples[n-1].Up != up || w.Samples[n-1].Down != down {
		w.Samples = append(w.Samples, v1alpha1.AutoscalingSample{Time: metav1.Time{Time: now}, Up: up, Down: down})
	}
	// Drop what no window reaches any more: everything before the sample in force at now-keep.
	cut := 0
	for i, s := range w.Samples {
		if !s.Time.After(now.Add(-keep)) {
			cut = i
		}
	}
	w.Samples = w.Samples[cut:]
	if n := len(w.Samples); n > maxSamples {
		// Dropping the oldest shortens what the window covers, which only delays a scale-down.
		w.Samples = w.Samples[n-maxSamples:]
	}
}

// forget clears a window's readings (its metrics went missing), keeping its cool-down.
func forget(w *v1alpha1.AutoscalingWindow) {
	w.Samples = nil
	w.LastReading = nil
}

// over returns the samples in force during [now-span, now], or false when the window does not
// reach back that far yet (no sample at or before now-span): a decision waits for a full window.
func over(w *v1alpha1.AutoscalingWindow, now time.Time, span time.Duration) ([]v1alpha1.AutoscalingSample, bool) {
	start := now.Add(-span)
	first := -1
	for i, s := range w.Samples {
		if !s.Time.After(start) {
			first = i
		}
	}
	if first < 0 {
		return nil, false
	}
	return w.Samples[first:], true
}

// minUp is the smallest count asked for over the span: a scale-up goes no higher, so that it
// needs the whole span to ask for more.
func minUp(w *v1alpha1.AutoscalingWindow, now time.Time, span time.Duration) (int32, bool) {
	ss, ok := over(w, now, span)
	if !ok {
		return 0, false
	}
	m := ss[0].Up
	for _, s := range ss[1:] {
		m = min(m, s.Up)
	}
	return m, true
}

// maxDown is the largest count asked for (with the hysteresis margin) over the span: a
// scale-down goes no lower, so that it needs the whole span to ask for less.
func maxDown(w *v1alpha1.AutoscalingWindow, now time.Time, span time.Duration) (int32, bool) {
	ss, ok := over(w, now, span)
	if !ok {
		return 0, false
	}
	m := ss[0].Down
	for _, s := range ss[1:] {
		m = max(m, s.Down)
	}
	return m, true
}

// coolingDown says whether the resource changed less than cooldown ago, and until when.
func coolingDown(w *v1alpha1.AutoscalingWindow, now time.Time, cooldown time.Duration) (bool, time.Time) {
	if w.LastChange == nil {
		return false, time.Time{}
	}
	until := w.LastChange.Add(cooldown)
	return now.Before(until), until
}

// window returns the status' window for a resource, adding it when there is none.
func window(st *v1alpha1.AutoscalingStatus, resource string) *v1alpha1.AutoscalingWindow {
	for i := range st.Windows {
		if st.Windows[i].Resource == resource {
			return &st.Windows[i]
		}
	}
	st.Windows = append(st.Windows, v1alpha1.AutoscalingWindow{Resource: resource})
	return &st.Windows[len(st.Windows)-1]
}
