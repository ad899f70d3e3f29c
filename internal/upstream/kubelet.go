package upstream

import (
	"context"
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// CheckReferences makes the checks a kubelet makes before it starts a pod, which KWOK does not:
// every Secret, ConfigMap, claim and ServiceAccount a scheduled pod in namespace names exists
// (unless the reference is optional). A kubelet would leave such a pod in ContainerCreating
// (a missing volume source: "MountVolume.SetUp failed", k8s.io/kubernetes v1.36.3
// pkg/volume/secret and pkg/volume/configmap) or CreateContainerConfigError (a missing env
// source, pkg/kubelet/kubelet_pods.go makeEnvironmentVariables). It returns one line per
// missing object.
func CheckReferences(ctx context.Context, c client.Client, namespace string) ([]string, error) {
	var pods corev1.PodList
	if err := c.List(ctx, &pods, client.InNamespace(namespace)); err != nil {
		return nil, err
	}
	var missing []string
	for i := range pods.Items {
		pod := &pods.Items[i]
		if pod.Spec.NodeName == "" || pod.DeletionTimestamp != nil {
			continue
		}
		for _, ref := range podReferences(pod) {
			err := c.Get(ctx, client.ObjectKey{Namespace: pod.Namespace, Name: ref.name}, ref.obj)
			if apierrors.IsNotFound(err) {
				missing = append(missing, fmt.Sprintf("pod %s: %s %s (%s) does not exist", pod.Name, ref.kind, ref.name, ref.use))
			} else if err != nil {
				return nil, err
			}
		}
	}
	sort.Strings(missing)
	return missing, nil
}

type reference struct {
	kind, name, use string
	obj             client.Object
}

// podReferences are the objects a pod needs to start: its ServiceAccount, its volumes' Secrets,
// ConfigMaps and claims (projected sources included) and its containers' non-optional env
// sources.
func podReferences(pod *corev1.Pod) []reference {
	sa := pod.Spec.ServiceAccountName
	if sa == "" {
		sa = "default"
	}
	refs := []reference{{"ServiceAccount", sa, "spec.serviceAccountName", &corev1.ServiceAccount{}}}
	secret := func(name, use string) { refs = append(refs, reference{"Secret", name, use, &corev1.Secret{}}) }
	configMap := func(name, use string) { refs = append(refs, reference{"ConfigMap", name, use, &corev1.ConfigMap{}}) }
	optional := func(o *bool) bool { return o != nil && *o }
	for _, v := range pod.Spec.Volumes {
		use := "volume " + v.Name
		switch {
		case v.Secret != nil && !optional(v.Secret.Optional):
			secret(v.Secret.SecretName, use)
		case v.ConfigMap != nil && !optional(v.ConfigMap.Optional):
			configMap(v.ConfigMap.Name, use)
		case v.PersistentVolumeClaim != nil:
			refs = append(refs, reference{"PersistentVolumeClaim", v.PersistentVolumeClaim.ClaimName, use, &corev1.PersistentVolumeClaim{}})
		case v.Projected != nil:
			for _, s := range v.Projected.Sources {
				if s.Secret != nil && !optional(s.Secret.Optional) {
					secret(s.Secret.Name, use)
				}
				if s.ConfigMap != nil && !optional(s.ConfigMap.Optional) {
					configMap(s.ConfigMap.Name, use)
				}
			}
		}
	}
	containers := append(append([]corev1.Container{}, pod.Spec.InitContainers...), pod.Spec.Containers...)
	for _, ctr := range containers {
		use := "container " + ctr.Name
		for _, e := range ctr.EnvFrom {
			if e.SecretRef != nil && !optional(e.SecretRef.Optional) {
				secret(e.SecretRef.Name, use+" envFrom")
			}
			if e.ConfigMapRef != nil && !optional(e.ConfigMapRef.Optional) {
				configMap(e.ConfigMapRef.Name, use+" envFrom")
			}
		}
		for _, e := range ctr.Env {
			if e.ValueFrom == nil {
				continue
			}
			if r := e.ValueFrom.SecretKeyRef; r != nil && !optional(r.Optional) {
				secret(r.Name, use+" env "+e.Name)
			}
			if r := e.ValueFrom.ConfigMapKeyRef; r != nil && !optional(r.Optional) {
				configMap(r.Name, use+" env "+e.Name)
			}
		}
	}
	return refs
}
