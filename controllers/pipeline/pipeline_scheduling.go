package pipeline

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/internal/desired"
)

// Spread and node affinity (internal/desired/placement.go) place a pipeline's pods where they
// can run, or nowhere: a master that a hard spread constraint keeps off a node, a data node with
// no free local volume on the tier's nodes, a broker too big for any node. The scheduler says
// why only on the pod (PodScheduled=False, reason Unschedulable, "0/15 nodes are available:
// ..."), and the child's own status says little more (ECK: health yellow; Strimzi: not ready).
// PodsScheduled brings the scheduler's answer to the pipeline: which pods, of which child, and
// what the scheduler said.

// maxNamedPods bounds the pods PodsScheduled names: a pool of fifty unschedulable executors
// says the same fifty times, and a condition's message has a size limit.
const maxNamedPods = 3

// workloadOrder is the order PodsScheduled names workloads in: the stateful ones, whose
// pods cannot go elsewhere, first.
var workloadOrder = []string{
	desired.WorkloadElasticsearchMaster, desired.WorkloadElasticsearchData,
	desired.WorkloadKafkaController, desired.WorkloadKafkaBroker,
	desired.WorkloadKafkaEntityOperator, desired.WorkloadKafkaCruiseControl,
	desired.WorkloadSparkDriver, desired.WorkloadSparkExecutor,
}

// unschedulablePod is a pod the scheduler found no node for.
type unschedulablePod struct{ name, workload, message string }

// podsScheduled is the PodsScheduled condition for p's pods: False, naming the first
// maxNamedPods pods the scheduler could not place (by workload, then name), their child and the
// scheduler's message, when there is any; else True. Pods the scheduler has not tried yet,
// finished pods and pods being deleted count as scheduled: they wait for nothing a user can
// change. The message holds nothing that changes while the pods do not (no age, no count of
// scheduled pods), so that an unchanged cluster is not written to again.
func podsScheduled(p *v1alpha1.AnalyticsPipeline, pods []corev1.Pod) childStatus {
	var stuck []unschedulablePod
	for i := range pods {
		if u, ok := unschedulable(&pods[i]); ok {
			stuck = append(stuck, u)
		}
	}
	if len(stuck) == 0 {
		return childStatus{metav1.ConditionTrue, v1alpha1.ReasonScheduled, "no pod of the pipeline is unschedulable"}
	}
	sort.Slice(stuck, func(i, j int) bool {
		a, b := workloadRank(stuck[i].workload), workloadRank(stuck[j].workload)
		if a != b {
			return a < b
		}
		if stuck[i].workload != stuck[j].workload {
			return stuck[i].workload < stuck[j].workload
		}
		return stuck[i].name < stuck[j].name
	})
	// Consecutive pods of one workload with one message are named together, with it once.
	var groups []string
	named := stuck[:min(len(stuck), maxNamedPods)]
	for i := 0; i < len(named); {
		j := i + 1
		for j < len(named) && named[j].workload == named[i].workload && named[j].message == named[i].message {
			j++
		}
		names := make([]string, 0, j-i)
		for _, u := range named[i:j] {
			names = append(names, u.name)
		}
		groups = append(groups, fmt.Sprintf("%s: %s: %s", workloadChild(p, named[i].workload),
			strings.Join(names, ", "), named[i].message))
		i = j
	}
	msg := fmt.Sprintf("%d pod(s) cannot be scheduled: %s", len(stuck), strings.Join(groups, "; "))
	if more := len(stuck) - len(named); more > 0 {
		msg += fmt.Sprintf("; and %d more (kubectl get pods -n %s -l %s=%s --field-selector status.phase=Pending)",
			more, p.Namespace, desired.LabelPipeline, p.Name)
	}
	return childStatus{metav1.ConditionFalse, v1alpha1.ReasonUnschedulable, msg}
}

// unschedulable says whether the scheduler found no node for pod, and what it said. The
// scheduler sets PodScheduled=False with reason Unschedulable when it tried and failed
// (corev1.PodReasonUnschedulable), and rewrites the message when its answer changes.
func unschedulable(pod *corev1.Pod) (unschedulablePod, bool) {
	if pod.DeletionTimestamp != nil || pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
		return unschedulablePod{}, false
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
			msg := strings.TrimSpace(c.Message)
			if msg == "" {
				msg = "the scheduler gave no reason"
			}
			return unschedulablePod{name: pod.Name, workload: pod.Labels[desired.LabelWorkload], message: msg}, true
		}
	}
	return unschedulablePod{}, false
}

// workloadRank is the workload's place in workloadOrder; unknown workloads come last.
func workloadRank(w string) int {
	if i := slices.Index(workloadOrder, w); i >= 0 {
		return i
	}
	return len(workloadOrder)
}

// workloadChild names the child object (and its part) whose pods run workload w, as a user
// would look it up with kubectl.
func workloadChild(p *v1alpha1.AnalyticsPipeline, w string) string {
	switch w {
	case desired.WorkloadElasticsearchMaster:
		return fmt.Sprintf("Elasticsearch %s nodeSet %s", desired.ElasticsearchName(p), desired.MasterNodeSet)
	case desired.WorkloadElasticsearchData:
		return fmt.Sprintf("Elasticsearch %s nodeSet %s", desired.ElasticsearchName(p), desired.DataNodeSet)
	case desired.WorkloadKafkaController:
		return "KafkaNodePool " + desired.ControllerPoolName(p)
	case desired.WorkloadKafkaBroker:
		return "KafkaNodePool " + desired.BrokerPoolName(p)
	case desired.WorkloadKafkaEntityOperator:
		return fmt.Sprintf("Kafka %s entity operator", desired.KafkaName(p))
	case desired.WorkloadKafkaCruiseControl:
		return fmt.Sprintf("Kafka %s Cruise Control", desired.KafkaName(p))
	case desired.WorkloadSparkDriver:
		return fmt.Sprintf("SparkApplication %s driver", desired.SparkApplicationName(p))
	case desired.WorkloadSparkExecutor:
		return fmt.Sprintf("SparkApplication %s executors", desired.SparkApplicationName(p))
	case "":
		return "pod"
	}
	return fmt.Sprintf("workload %q", w)
}

// The pipeline's pods are made by ECK, Strimzi and the Spark operator, each from a pod template
// of Strata's that gives them strata.dev/pipeline (desired.PodLabels, which cites where each
// operator copies the template's labels). The manager caches only pods with that label
// (ManagerOptions): the operator runs beside clusters of tens of thousands of pods that are
// none of its business. Of those it keeps only what PodsScheduled reads.

// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch

// pipelinePods selects the pods the upstream operators made for any pipeline.
func pipelinePods() labels.Selector {
	req, err := labels.NewRequirement(desired.LabelPipeline, selection.Exists, nil)
	if err != nil {
		panic(err) // a constant, valid key
	}
	return labels.NewSelector().Add(*req)
}

// PodCache is the manager's cache of pods: the pipelines' only, and of each only its name,
// labels and scheduling state. A pod's spec (containers, environment, volumes) is most of its
// size and nothing the operator reads.
func PodCache() cache.ByObject {
	return cache.ByObject{Label: pipelinePods(), Transform: slimPod}
}

// slimPod keeps what PodsScheduled reads. A transform must be idempotent and accept objects
// that are not pods (the informer's tombstones pass through it).
func slimPod(obj any) (any, error) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return obj, nil
	}
	slim := &corev1.Pod{TypeMeta: pod.TypeMeta, ObjectMeta: pod.ObjectMeta,
		Status: corev1.PodStatus{Phase: pod.Status.Phase, Conditions: pod.Status.Conditions}}
	slim.Annotations, slim.ManagedFields = nil, nil
	return slim, nil
}

// pipelineOfPod maps a pod to the pipeline its label names, in its namespace.
func pipelineOfPod(_ context.Context, pod client.Object) []reconcile.Request {
	name := pod.GetLabels()[desired.LabelPipeline]
	if name == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: pod.GetNamespace(), Name: name}}}
}

// schedulingChanged passes the pod events that can change PodsScheduled: a pod that appears or
// goes while unschedulable, and a change of its PodScheduled condition (or of what makes it
// count: its phase, its deletion). A pod's other updates (readiness, restarts) pass by: the
// pipeline hears of those through its children's status.
var schedulingChanged = predicate.Funcs{
	CreateFunc: func(e event.CreateEvent) bool { return isUnschedulable(e.Object) },
	DeleteFunc: func(e event.DeleteEvent) bool { return isUnschedulable(e.Object) },
	UpdateFunc: func(e event.UpdateEvent) bool {
		return isUnschedulable(e.ObjectOld) != isUnschedulable(e.ObjectNew) ||
			!equality.Semantic.DeepEqual(podScheduled(e.ObjectOld), podScheduled(e.ObjectNew))
	},
	GenericFunc: func(event.GenericEvent) bool { return false },
}

func isUnschedulable(obj client.Object) bool {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return false
	}
	_, stuck := unschedulable(pod)
	return stuck
}

// podScheduled is a pod's PodScheduled condition without its times (nil: none).
func podScheduled(obj client.Object) *corev1.PodCondition {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return nil
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled {
			c.LastProbeTime, c.LastTransitionTime = metav1.Time{}, metav1.Time{}
			return &c
		}
	}
	return nil
}
