package pipeline_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/controllers/internal/envtestutil"
	"github.com/strata-dev/strata/internal/desired"
)

// No scheduler runs here: the test writes the PodScheduled conditions a scheduler would, on pods
// labelled as ECK and the Spark operator label theirs (desired.PodLabels). The pipeline names
// the pods it cannot place and their children, with the scheduler's message, and says nothing of
// an unschedulable pod without the label (the operator does not even cache it); once the pods are
// scheduled it turns True. A forced reconcile in between writes nothing: the message is stable.
func TestPodsScheduledFollowsThePods(t *testing.T) {
	o := envtestutil.StartOperator(t)
	ns, _ := o.CreateSamples(t)
	ctx := context.Background()
	p := &v1alpha1.AnalyticsPipeline{}
	p.Namespace, p.Name = ns, "sensors"
	envtestutil.WaitFor(t, o.C, p, func() error {
		return envtestutil.Condition(p.Status.Conditions, v1alpha1.ConditionPodsScheduled, "True", v1alpha1.ReasonScheduled)
	})

	const msg = "0/4 nodes are available: 1 node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }, " +
		"3 node(s) didn't match pod topology spread constraints. preemption: 0/4 nodes are available: 4 Preemption is not helpful for scheduling."
	pods := []*corev1.Pod{
		newPod(ns, "sensors-es-master-2", desired.PodLabels(p, desired.WorkloadElasticsearchMaster)),
		newPod(ns, "sensors-exec-1", desired.PodLabels(p, desired.WorkloadSparkExecutor)),
		newPod(ns, "unrelated", map[string]string{"app": "unrelated"}),
	}
	for _, pod := range pods {
		if err := o.C.Create(ctx, pod); err != nil {
			t.Fatal(err)
		}
		setScheduled(t, o.C, pod, corev1.ConditionFalse, corev1.PodReasonUnschedulable, msg)
	}
	// Both labelled pods, in the order of their workloads; not the unrelated one.
	want := "2 pod(s) cannot be scheduled: Elasticsearch sensors nodeSet master: sensors-es-master-2: " + msg +
		"; SparkApplication sensors executors: sensors-exec-1: " + msg
	envtestutil.WaitFor(t, o.C, p, func() error {
		if err := envtestutil.Condition(p.Status.Conditions, v1alpha1.ConditionPodsScheduled, "False", v1alpha1.ReasonUnschedulable); err != nil {
			return err
		}
		if got := envtestutil.Meta(p, v1alpha1.ConditionPodsScheduled).Message; got != want {
			return fmt.Errorf("PodsScheduled message\n%q, want\n%q", got, want)
		}
		return nil
	})
	got := envtestutil.Meta(p, v1alpha1.ConditionPodsScheduled)
	if got.ObservedGeneration != p.Generation {
		t.Errorf("PodsScheduled observedGeneration %d, want %d", got.ObservedGeneration, p.Generation)
	}
	if r := envtestutil.Meta(p, v1alpha1.ConditionReady); r == nil || r.Status != metav1.ConditionFalse {
		t.Errorf("Ready %+v with unschedulable pods, want False", r)
	} else if envtestutil.Meta(p, v1alpha1.ConditionPlanValid).Status == metav1.ConditionTrue &&
		envtestutil.Meta(p, v1alpha1.ConditionStorageReady).Status == metav1.ConditionTrue &&
		(r.Reason != v1alpha1.ReasonUnschedulable || !strings.HasPrefix(r.Message, v1alpha1.ConditionPodsScheduled+": ")) {
		t.Errorf("Ready %s %q: want it to name the unschedulable pods first", r.Reason, r.Message)
	}
	// A reconcile with nothing changed writes nothing (the message holds no age).
	o.Settle(t, p)

	for _, pod := range pods {
		setScheduled(t, o.C, pod, corev1.ConditionTrue, "", "")
	}
	envtestutil.WaitFor(t, o.C, p, func() error {
		return envtestutil.Condition(p.Status.Conditions, v1alpha1.ConditionPodsScheduled, "True", v1alpha1.ReasonScheduled)
	})
}

func newPod(ns, name string, labels map[string]string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
	}
}

// setScheduled writes the pod's PodScheduled condition, as the scheduler does.
func setScheduled(t *testing.T, c client.Client, pod *corev1.Pod, status corev1.ConditionStatus, reason, message string) {
	t.Helper()
	ctx := context.Background()
	if err := c.Get(ctx, client.ObjectKeyFromObject(pod), pod); err != nil {
		t.Fatal(err)
	}
	pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: status, Reason: reason,
		Message: message, LastTransitionTime: metav1.Now()}}
	if err := c.Status().Update(ctx, pod); err != nil {
		t.Fatal(fmt.Errorf("pod %s's status: %w", pod.Name, err))
	}
}
