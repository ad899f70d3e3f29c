package autoscale

import (
	"strings"
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
		{"learned once: a scale-up held back asks again", at(0), at(33.5), (40 + 30) * 60, 45, (40 + 30) * 60},
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

// Brokers asked back while Strimzi removes one wait for the removal, which Strimzi carries to
// its end; the request still teaches the hold. Replayed: 4 brokers' worth of traffic, a scale-
// down when it falls, the traffic back while a broker leaves (held back, once reported), then
// the removal done (scaled up).
func TestBrokersAskedBackWhileOneLeaves(t *testing.T) {
	pol := testPolicy()
	pol.BrokerStabilization = 5 * time.Minute
	r := newRun(pol)
	r.cur.Brokers = 4
	r.cur.Status = &v1alpha1.AutoscalingStatus{Brokers: 4}
	// 240 MB/s keeps 4 brokers (60 MB/s each, under 70 % of 112.5); 150 MB/s needs 3.
	r.series(20, func(int) values { return brokers(150 * mb) })
	if got := r.changes(); !strings.Contains(got, "Brokers ScaleDown 4->3") {
		t.Fatalf("no scale-down on low traffic: %q", got)
	}
	r.log = nil
	why := "Strimzi's auto-rebalance of Kafka sensors is RebalanceOnScaleDown"
	r.pol.Safety = BrokerSafety{Reason: "RebalanceRunning", Message: why, Leaving: 1, LeavingWhy: why}
	for i := 20; i < 30; i++ {
		r.read(i, brokers(330*mb))
	}
	if got := r.changes(); got != "660s Brokers Blocked 3->4 BrokersLeaving" {
		t.Errorf("brokers asked back while one leaves: %q, want one Blocked (BrokersLeaving) and no scale-up", got)
	}
	if r.cur.Brokers != 3 {
		t.Errorf("brokers %d while one leaves, want 3", r.cur.Brokers)
	}
	if d := r.cur.Status.LastDecision; d == nil || !strings.Contains(d.Message, why) {
		t.Errorf("the held-back scale-up does not say what removes the broker: %+v", d)
	}
	w := window(r.cur.Status, v1alpha1.ResourceBrokers)
	if w.ScaleDownHoldSeconds == 0 {
		t.Errorf("the scale-up held back taught no hold")
	}
	r.log = nil
	r.pol.Safety = BrokerSafety{}
	r.read(30, brokers(330*mb))
	if got := r.changes(); !strings.HasPrefix(got, "900s Brokers ScaleUp 3->") {
		t.Errorf("after the removal: %q, want a scale-up", got)
	}
}
