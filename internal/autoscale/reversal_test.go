package autoscale

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/strata-dev/strata/api/v1alpha1"
)

// A scale-up that reverses a scale-down less than half an hour old holds the next scale-down
// for the cycle just seen plus half an hour; any other scale-up leaves the hold as it was.
func TestLearnFromReversal(t *testing.T) {
	t0 := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	at := func(min float64) *metav1.Time {
		return &metav1.Time{Time: t0.Add(time.Duration(min * float64(time.Minute)))}
	}
	cases := []struct {
		name     string
		up, down *metav1.Time
		hold     int32
		now      float64 // minutes
		want     int32
	}{
		{"up, down, up 6.5 minutes later: the cycle from the first up", at(0), at(33.5), 0, 40, (40 + 30) * 60},
		{"no scale-up before the scale-down: the cycle from it", nil, at(10), 0, 25, (15 + 30) * 60},
		{"up 30 minutes after the down: no reversal", at(0), at(33.5), 0, 63.5, 0},
		{"never scaled down", at(0), nil, 0, 40, 0},
		{"an earlier hold is kept when nothing is reversed", at(0), at(33.5), 1234, 70, 1234},
		{"a hold longer than a day is a day", at(-2000), at(0), 0, 1, 86400},
	}
	for _, c := range cases {
		w := &v1alpha1.AutoscalingWindow{LastScaleUp: c.up, LastScaleDown: c.down, ScaleDownHoldSeconds: c.hold}
		learnFromReversal(w, t0.Add(time.Duration(c.now*float64(time.Minute))))
		if w.ScaleDownHoldSeconds != c.want {
			t.Errorf("%s: hold %d s, want %d", c.name, w.ScaleDownHoldSeconds, c.want)
		}
	}
}

// The hold lengthens the span a scale-down needs, never shortens the spec's; brokers wait at
// least the policy's broker window, the other resources do not.
func TestStabilizationWithHold(t *testing.T) {
	r := &recommender{pol: Policy{Stabilization: 5 * time.Minute, BrokerStabilization: 30 * time.Minute}}
	for _, c := range []struct {
		resource string
		hold     int32
		want     time.Duration
	}{
		{v1alpha1.ResourceExecutors, 0, 5 * time.Minute},
		{v1alpha1.ResourceExecutors, 60, 5 * time.Minute},
		{v1alpha1.ResourceElasticsearchDataNodes, 4200, 70 * time.Minute},
		{v1alpha1.ResourceBrokers, 0, 30 * time.Minute},
		{v1alpha1.ResourceBrokers, 4200, 70 * time.Minute},
	} {
		w := &v1alpha1.AutoscalingWindow{Resource: c.resource, ScaleDownHoldSeconds: c.hold}
		if got := r.stabilization(w); got != c.want {
			t.Errorf("%s, hold %d s: %s, want %s", c.resource, c.hold, got, c.want)
		}
	}
	p := pipeline()
	if got := NewPolicy(p, v1alpha1.Plan{}, BrokerSafety{}, true).BrokerStabilization; got != ReversalWindow {
		t.Errorf("NewPolicy's broker window, unset: %s, want %s", got, ReversalWindow)
	}
	p.Spec.Autoscaling.BrokerScaleDownStabilizationSeconds = ptr.To[int32](20)
	if got := NewPolicy(p, v1alpha1.Plan{}, BrokerSafety{}, true).BrokerStabilization; got != 20*time.Second {
		t.Errorf("NewPolicy's broker window, 20: %s, want 20s", got)
	}
}
