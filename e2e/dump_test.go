//go:build e2e

package e2e

// On failure the suite leaves, under $E2E_ARTIFACTS/dump (default e2e/artifacts/dump), every
// pod's logs (and its previous container's), the events and the objects of the namespaces it
// used and of the cluster-scoped kinds that matter, and prints the pipeline's status and the
// operator's last log lines.

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// dumpNamespaces are the namespaces the suite installs into.
var dumpNamespaces = []string{strataNamespace, pipelineNamespace, strimziNamespace, sparkNamespace, eckNamespace}

// dumpKinds are listed in every dump namespace (namespaced) or once (cluster-scoped).
var dumpKinds = []schema.GroupVersionKind{
	{Group: "strata.dev", Version: "v1alpha1", Kind: "AnalyticsPipeline"},
	{Group: "strata.dev", Version: "v1alpha1", Kind: "StorageTier"},
	{Group: "kafka.strimzi.io", Version: "v1", Kind: "Kafka"},
	{Group: "kafka.strimzi.io", Version: "v1", Kind: "KafkaNodePool"},
	{Group: "kafka.strimzi.io", Version: "v1", Kind: "KafkaTopic"},
	{Group: "kafka.strimzi.io", Version: "v1", Kind: "KafkaRebalance"},
	{Group: "sparkoperator.k8s.io", Version: "v1beta2", Kind: "SparkApplication"},
	{Group: "elasticsearch.k8s.elastic.co", Version: "v1", Kind: "Elasticsearch"},
	{Group: "apps", Version: "v1", Kind: "Deployment"},
	{Group: "apps", Version: "v1", Kind: "StatefulSet"},
	{Group: "", Version: "v1", Kind: "Pod"},
	{Group: "", Version: "v1", Kind: "PersistentVolumeClaim"},
	{Group: "", Version: "v1", Kind: "PersistentVolume"},
	{Group: "", Version: "v1", Kind: "Node"},
	{Group: "storage.k8s.io", Version: "v1", Kind: "StorageClass"},
}

// dump writes the artifacts; it never fails the test itself (the cluster may be half broken).
func (s *suite) dump() {
	if s.c == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	dir := filepath.Join(s.artifacts, "dump")
	_ = os.RemoveAll(dir)
	s.t.Logf("the suite failed: logs, events and objects go to %s", dir)

	for _, gvk := range dumpKinds {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		if err := s.c.List(ctx, list); err != nil {
			s.write(filepath.Join(dir, "errors.txt"), fmt.Sprintf("list %s: %v\n", gvk.Kind, err))
			continue
		}
		byNS := map[string][]any{}
		for _, item := range list.Items {
			byNS[item.GetNamespace()] = append(byNS[item.GetNamespace()], item.Object)
		}
		for ns, items := range byNS {
			if ns != "" && !contains(dumpNamespaces, ns) {
				continue
			}
			b, _ := yaml.Marshal(map[string]any{"items": items})
			s.write(filepath.Join(dir, nsDir(ns), strings.ToLower(gvk.Kind)+"s.yaml"), string(b))
		}
	}

	for _, ns := range dumpNamespaces {
		events, err := s.cs.CoreV1().Events(ns).List(ctx, metav1.ListOptions{})
		if err == nil {
			sort.Slice(events.Items, func(i, j int) bool {
				return eventTime(events.Items[i]).Before(eventTime(events.Items[j]))
			})
			var b strings.Builder
			for _, e := range events.Items {
				fmt.Fprintf(&b, "%s %s %s/%s %s: %s (x%d)\n", eventTime(e).Format(time.RFC3339), e.Type,
					e.InvolvedObject.Kind, e.InvolvedObject.Name, e.Reason, e.Message, e.Count)
			}
			s.write(filepath.Join(dir, ns, "events.txt"), b.String())
		}
		pods, err := s.cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			continue
		}
		for _, p := range pods.Items {
			for _, c := range append(p.Spec.InitContainers, p.Spec.Containers...) {
				for _, previous := range []bool{false, true} {
					logs := s.logs(ctx, ns, p.Name, c.Name, previous, 0)
					if logs == "" {
						continue
					}
					name := fmt.Sprintf("%s.%s.log", p.Name, c.Name)
					if previous {
						name = fmt.Sprintf("%s.%s.previous.log", p.Name, c.Name)
					}
					s.write(filepath.Join(dir, ns, "logs", name), logs)
				}
			}
		}
	}

	// What a reader wants first: the pipeline's conditions and the operator's last words.
	p := &unstructured.Unstructured{}
	p.SetGroupVersionKind(dumpKinds[0])
	if err := s.c.Get(ctx, client.ObjectKey{Namespace: pipelineNamespace, Name: pipelineName}, p); err == nil {
		status, _ := yaml.Marshal(p.Object["status"])
		s.t.Logf("pipeline %s/%s status:\n%s", pipelineNamespace, pipelineName, status)
	}
	pods, err := s.cs.CoreV1().Pods(strataNamespace).List(ctx, metav1.ListOptions{})
	if err == nil {
		for _, pod := range pods.Items {
			s.t.Logf("operator pod %s (%s), last log lines:\n%s", pod.Name, pod.Status.Phase, s.logs(ctx, strataNamespace, pod.Name, "manager", false, 60))
		}
	}
}

func (s *suite) logs(ctx context.Context, ns, pod, container string, previous bool, tailLines int64) string {
	opts := &corev1.PodLogOptions{Container: container, Previous: previous}
	if tailLines > 0 {
		opts.TailLines = &tailLines
	}
	r, err := s.cs.CoreV1().Pods(ns).GetLogs(pod, opts).Stream(ctx)
	if err != nil {
		return ""
	}
	defer r.Close()
	b, _ := io.ReadAll(r)
	return string(b)
}

func (s *suite) write(path, content string) {
	_ = os.MkdirAll(filepath.Dir(path), 0o755)
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return
	}
	defer f.Close()
	_, _ = f.WriteString(content)
}

func nsDir(ns string) string {
	if ns == "" {
		return "cluster"
	}
	return ns
}

func eventTime(e corev1.Event) time.Time {
	switch {
	case !e.LastTimestamp.IsZero():
		return e.LastTimestamp.Time
	case !e.EventTime.IsZero():
		return e.EventTime.Time
	default:
		return e.CreationTimestamp.Time
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
