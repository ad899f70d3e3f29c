package controllers

import (
	"context"

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

// podCache is the manager's cache of pods: the pipelines' only, and of each only its name,
// labels and scheduling state. A pod's spec (containers, environment, volumes) is most of its
// size and nothing the operator reads.
func podCache() cache.ByObject {
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

// reportPods sets PodsScheduled from the pipeline's pods as the cache has them.
func (r *PipelineReconciler) reportPods(ctx context.Context, s *scope) error {
	pods := &corev1.PodList{}
	if err := r.Client.List(ctx, pods, client.InNamespace(s.pipeline.Namespace),
		client.MatchingLabels{desired.LabelPipeline: s.pipeline.Name}); err != nil {
		return err
	}
	st := podsScheduled(s.pipeline, pods.Items)
	s.conds.set(v1alpha1.ConditionPodsScheduled, st.status, st.reason, st.message)
	return nil
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
