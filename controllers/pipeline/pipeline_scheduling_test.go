package pipeline

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/internal/desired"
)

// PodsScheduled names the pods the scheduler cannot place, their child and its message, a few
// at most; pods not tried yet, finished or going count as scheduled.
func TestPodsScheduled(t *testing.T) {
	p := &v1alpha1.AnalyticsPipeline{ObjectMeta: metav1.ObjectMeta{Name: "sensors", Namespace: "analytics"}}
	const spread = "0/4 nodes are available: 1 node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }, " +
		"3 node(s) didn't match pod topology spread constraints."
	const volumes = "0/4 nodes are available: 2 node(s) didn't find available persistent volumes to bind."
	pod := func(name, workload string, cond *corev1.PodCondition, mod ...func(*corev1.Pod)) corev1.Pod {
		pd := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: p.Namespace,
			Labels: desired.PodLabels(p, workload)}, Status: corev1.PodStatus{Phase: corev1.PodPending}}
		if cond != nil {
			pd.Status.Conditions = []corev1.PodCondition{*cond}
		}
		for _, m := range mod {
			m(&pd)
		}
		return pd
	}
	stuck := func(msg string) *corev1.PodCondition {
		return &corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionFalse,
			Reason: corev1.PodReasonUnschedulable, Message: msg, LastTransitionTime: metav1.Now()}
	}
	placed := &corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionTrue}
	gated := &corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonSchedulingGated}
	deleting := func(pd *corev1.Pod) { pd.DeletionTimestamp = &metav1.Time{Time: time.Now()} }
	failed := func(pd *corev1.Pod) { pd.Status.Phase = corev1.PodFailed }
	for _, tc := range []struct {
		name   string
		pods   []corev1.Pod
		status metav1.ConditionStatus
		want   string // the whole message
	}{
		{"no pods", nil, metav1.ConditionTrue, "no pod of the pipeline is unschedulable"},
		{"scheduled, untried, gated", []corev1.Pod{
			pod("sensors-es-master-0", desired.WorkloadElasticsearchMaster, placed),
			pod("sensors-es-master-1", desired.WorkloadElasticsearchMaster, nil),
			pod("sensors-driver", desired.WorkloadSparkDriver, gated),
		}, metav1.ConditionTrue, "no pod of the pipeline is unschedulable"},
		{"one master", []corev1.Pod{
			pod("sensors-es-master-0", desired.WorkloadElasticsearchMaster, placed),
			pod("sensors-es-master-2", desired.WorkloadElasticsearchMaster, stuck(spread+"\n")),
		}, metav1.ConditionFalse,
			"1 pod(s) cannot be scheduled: Elasticsearch sensors nodeSet master: sensors-es-master-2: " + spread},
		{"deleted and failed pods do not count", []corev1.Pod{
			pod("sensors-es-master-2", desired.WorkloadElasticsearchMaster, stuck(spread), deleting),
			pod("sensors-exec-1", desired.WorkloadSparkExecutor, stuck(volumes), failed),
		}, metav1.ConditionTrue, "no pod of the pipeline is unschedulable"},
		{"grouped by workload and message, stateful first", []corev1.Pod{
			pod("sensors-exec-1", desired.WorkloadSparkExecutor, stuck(volumes)),
			pod("sensors-es-data-3", desired.WorkloadElasticsearchData, stuck(volumes)),
			pod("sensors-es-data-2", desired.WorkloadElasticsearchData, stuck(volumes)),
		}, metav1.ConditionFalse,
			"3 pod(s) cannot be scheduled: Elasticsearch sensors nodeSet data: sensors-es-data-2, sensors-es-data-3: " + volumes +
				"; SparkApplication sensors executors: sensors-exec-1: " + volumes},
		{"bounded", []corev1.Pod{
			pod("sensors-sensors-broker-5", desired.WorkloadKafkaBroker, stuck(volumes)),
			pod("sensors-sensors-broker-3", desired.WorkloadKafkaBroker, stuck(spread)),
			pod("sensors-sensors-broker-4", desired.WorkloadKafkaBroker, stuck(volumes)),
			pod("sensors-sensors-controller-0", desired.WorkloadKafkaController, stuck(spread)),
			pod("sensors-exec-1", desired.WorkloadSparkExecutor, stuck(volumes)),
			pod("sensors-exec-2", desired.WorkloadSparkExecutor, stuck(volumes)),
		}, metav1.ConditionFalse,
			"6 pod(s) cannot be scheduled: KafkaNodePool sensors-controller: sensors-sensors-controller-0: " + spread +
				"; KafkaNodePool sensors-broker: sensors-sensors-broker-3: " + spread +
				"; KafkaNodePool sensors-broker: sensors-sensors-broker-4: " + volumes +
				"; and 3 more (kubectl get pods -n analytics -l strata.dev/pipeline=sensors --field-selector status.phase=Pending)"},
		{"a pod of no known workload", []corev1.Pod{
			pod("odd", "something-else", stuck("")),
		}, metav1.ConditionFalse,
			`1 pod(s) cannot be scheduled: workload "something-else": odd: the scheduler gave no reason`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := podsScheduled(p, tc.pods)
			wantReason := v1alpha1.ReasonScheduled
			if tc.status == metav1.ConditionFalse {
				wantReason = v1alpha1.ReasonUnschedulable
			}
			if got.status != tc.status || got.reason != wantReason || got.message != tc.want {
				t.Errorf("got %s %s %q\nwant %s %s %q", got.status, got.reason, got.message, tc.status, wantReason, tc.want)
			}
			// The same pods in another order, with other times, say the same: an unchanged
			// cluster writes no status.
			rev := make([]corev1.Pod, len(tc.pods))
			for i := range tc.pods {
				rev[len(rev)-1-i] = *tc.pods[i].DeepCopy()
				for j := range rev[len(rev)-1-i].Status.Conditions {
					rev[len(rev)-1-i].Status.Conditions[j].LastTransitionTime = metav1.NewTime(time.Now().Add(time.Hour))
				}
			}
			if again := podsScheduled(p, rev); again != got {
				t.Errorf("reordered pods: %q, want %q", again.message, got.message)
			}
		})
	}
}

// Every workload Strata labels pods with has a name for its child, and a place in the order.
func TestWorkloadChildNamesEveryWorkload(t *testing.T) {
	p := &v1alpha1.AnalyticsPipeline{ObjectMeta: metav1.ObjectMeta{Name: "sensors"}}
	for _, w := range workloadOrder {
		if got := workloadChild(p, w); strings.HasPrefix(got, "workload ") || !strings.Contains(got, "sensors") {
			t.Errorf("workload %s: %q", w, got)
		}
	}
}

// The pod cache keeps a pod's labels and scheduling state, and drops what the operator never
// reads; the transform is idempotent and passes other objects through.
func TestSlimPod(t *testing.T) {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "sensors-es-data-0", Namespace: "analytics", Labels: map[string]string{desired.LabelPipeline: "sensors"},
			Annotations: map[string]string{"big": strings.Repeat("x", 1000)}, ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "eck"}}},
		Spec: corev1.PodSpec{NodeName: "n", Containers: []corev1.Container{{Name: "elasticsearch"}}},
		Status: corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled,
			Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable, Message: "0/1 nodes are available"}}},
	}
	out, err := slimPod(pod)
	if err != nil {
		t.Fatal(err)
	}
	slim := out.(*corev1.Pod)
	if slim.Labels[desired.LabelPipeline] != "sensors" || len(slim.Annotations) > 0 || len(slim.ManagedFields) > 0 ||
		len(slim.Spec.Containers) > 0 {
		t.Errorf("slim pod %+v", slim)
	}
	if _, stuck := unschedulable(slim); !stuck {
		t.Errorf("the slim pod lost its PodScheduled condition: %+v", slim.Status)
	}
	again, _ := slimPod(slim)
	if again.(*corev1.Pod).Name != slim.Name || len(again.(*corev1.Pod).Status.Conditions) != 1 {
		t.Errorf("not idempotent: %+v", again)
	}
	if other, _ := slimPod("tombstone"); other != "tombstone" {
		t.Errorf("a non-pod changed: %v", other)
	}
}
