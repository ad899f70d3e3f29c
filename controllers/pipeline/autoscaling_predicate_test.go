package pipeline

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/event"

	"github.com/strata-dev/strata/api/v1alpha1"
)

// TestAutoscalingWritten: the pipeline reconciler is woken by what it plans with, not by what
// every reading rewrites (the windows' times, the last decision's record, the intake's readings).
func TestAutoscalingWritten(t *testing.T) {
	at := metav1.NewTime(time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC))
	base := func() *v1alpha1.AnalyticsPipeline {
		return &v1alpha1.AnalyticsPipeline{Status: v1alpha1.AnalyticsPipelineStatus{
			Autoscaling: &v1alpha1.AutoscalingStatus{Brokers: 3, Executors: 2,
				Readings: []v1alpha1.AutoscalingReading{{Time: at, IngestRate: 100, ReceiveBytes: 1000}}},
		}}
	}
	for _, tc := range []struct {
		name   string
		change func(p *v1alpha1.AnalyticsPipeline)
		want   bool
	}{
		{"nothing", func(*v1alpha1.AnalyticsPipeline) {}, false},
		{"a new reading", func(p *v1alpha1.AnalyticsPipeline) {
			p.Status.Autoscaling.Readings = append(p.Status.Autoscaling.Readings,
				v1alpha1.AutoscalingReading{Time: metav1.NewTime(at.Add(30 * time.Second)), IngestRate: 300, ReceiveBytes: 3000})
		}, false},
		{"the readings dropped", func(p *v1alpha1.AnalyticsPipeline) { p.Status.Autoscaling.Readings = nil }, false},
		{"a broker target", func(p *v1alpha1.AnalyticsPipeline) { p.Status.Autoscaling.Brokers = 4 }, true},
		{"an executor target", func(p *v1alpha1.AnalyticsPipeline) { p.Status.Autoscaling.Executors = 3 }, true},
		{"the Autoscaling condition", func(p *v1alpha1.AnalyticsPipeline) {
			p.Status.Conditions = []metav1.Condition{{Type: v1alpha1.ConditionAutoscaling, Status: metav1.ConditionFalse, Reason: "MetricsUnavailable"}}
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			old, cur := base(), base()
			tc.change(cur)
			if got := autoscalingWritten.Update(event.UpdateEvent{ObjectOld: old, ObjectNew: cur}); got != tc.want {
				t.Errorf("autoscalingWritten = %t, want %t", got, tc.want)
			}
		})
	}
}
