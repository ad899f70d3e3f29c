package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/strata-dev/strata/internal/desired"
)

// createFixtures stands in for what a real cluster has and a bare control plane lacks: a node
// with the sample NVMe tier's label (so its local volumes have somewhere to go) and the sample
// HDD tier's dynamic StorageClass.
func createFixtures(ctx context.Context, c client.Client) error {
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "local-node-1", Labels: map[string]string{
		"kubernetes.io/hostname": "local-node-1", "strata.dev/nvme": "true",
	}}}
	sc := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "st1"}, Provisioner: "ebs.csi.aws.com"}
	for _, o := range []client.Object{node, sc} {
		if err := c.Create(ctx, o); client.IgnoreAlreadyExists(err) != nil {
			return err
		}
	}
	return nil
}

// waitReconciled waits until every sample's status reports its current generation, so that the
// tables show what the operator did rather than an empty status.
func waitReconciled(ctx context.Context, c client.Client, samples []*unstructured.Unstructured, wait time.Duration) {
	deadline := time.Now().Add(wait)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		pending := 0
		for _, s := range samples {
			u := &unstructured.Unstructured{}
			u.SetGroupVersionKind(s.GroupVersionKind())
			if err := c.Get(ctx, client.ObjectKeyFromObject(s), u); err != nil {
				pending++
				continue
			}
			observed, _, _ := unstructured.NestedInt64(u.Object, "status", "observedGeneration")
			if observed != u.GetGeneration() {
				pending++
			}
		}
		if pending == 0 {
			return
		}
		time.Sleep(500 * time.Millisecond)
	}
	say("some samples were not reconciled within %s; showing them as they are", wait)
}

// printTables prints pipelines and tiers with their printer columns, fetched as server-side
// tables: exactly what `kubectl get` shows.
func printTables(ctx context.Context, cfg *rest.Config) error {
	for _, res := range []struct{ resource, title string }{
		{"storagetiers", "StorageTiers"}, {"analyticspipelines", "AnalyticsPipelines"},
	} {
		table, err := getTable(ctx, cfg, res.resource)
		if err != nil {
			return err
		}
		fmt.Printf("\n%s:\n", res.title)
		w := tabwriter.NewWriter(os.Stdout, 0, 4, 3, ' ', 0)
		var head []string
		if res.resource == "analyticspipelines" {
			head = append(head, "NAMESPACE")
		}
		for _, col := range table.ColumnDefinitions {
			if col.Priority == 0 {
				head = append(head, strings.ToUpper(col.Name))
			}
		}
		fmt.Fprintln(w, strings.Join(head, "\t"))
		for _, row := range table.Rows {
			var cells []string
			if res.resource == "analyticspipelines" {
				cells = append(cells, namespaceOf(row))
			}
			for i, col := range table.ColumnDefinitions {
				if col.Priority == 0 && i < len(row.Cells) {
					cells = append(cells, fmt.Sprint(orNone(row.Cells[i])))
				}
			}
			fmt.Fprintln(w, strings.Join(cells, "\t"))
		}
		_ = w.Flush()
	}
	fmt.Println()
	return nil
}

func getTable(ctx context.Context, cfg *rest.Config, resource string) (*metav1.Table, error) {
	scheme := runtime.NewScheme()
	_ = metav1.AddMetaToScheme(scheme)
	rc := rest.CopyConfig(cfg)
	rc.GroupVersion = &schema.GroupVersion{Group: "strata.dev", Version: "v1alpha1"}
	rc.APIPath = "/apis"
	rc.NegotiatedSerializer = serializer.NewCodecFactory(scheme).WithoutConversion()
	restClient, err := rest.RESTClientFor(rc)
	if err != nil {
		return nil, err
	}
	table := &metav1.Table{}
	err = restClient.Get().Resource(resource).
		SetHeader("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io").
		Param("includeObject", "Object").
		Do(ctx).Into(table)
	return table, err
}

func namespaceOf(row metav1.TableRow) string {
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(row.Object.Raw); err == nil {
		return u.GetNamespace()
	}
	return ""
}

func orNone(v any) any {
	if v == nil || v == "" {
		return "<none>"
	}
	return v
}

// childKinds are the kinds of a pipeline's children, in the order they are listed: every kind
// desired.All builds, the Spark driver's ServiceAccount and RoleBinding and the job's credentials
// (KafkaUser, Secrets) included.
var childKinds = []schema.GroupVersionKind{desired.ConfigMapGVK, desired.KafkaNodePoolGVK, desired.KafkaGVK,
	desired.KafkaRebalanceGVK, desired.KafkaTopicGVK, desired.ElasticsearchGVK, desired.PersistentVolumeClaimGVK,
	desired.ServiceAccountGVK, desired.RoleBindingGVK, desired.KafkaUserGVK, desired.SecretGVK, desired.SparkApplicationGVK}

// printChildren lists what the operator created for each sample pipeline.
func printChildren(ctx context.Context, c client.Client, samples []*unstructured.Unstructured) error {
	for _, s := range samples {
		if s.GetKind() != "AnalyticsPipeline" {
			continue
		}
		fmt.Printf("Children of AnalyticsPipeline %s/%s:\n", s.GetNamespace(), s.GetName())
		w := tabwriter.NewWriter(os.Stdout, 0, 4, 3, ' ', 0)
		fmt.Fprintln(w, "KIND\tNAME\tSUMMARY")
		for _, gvk := range childKinds {
			list := &unstructured.UnstructuredList{}
			list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
			if err := c.List(ctx, list, client.InNamespace(s.GetNamespace()),
				client.MatchingLabels{desired.LabelInstance: s.GetName(), desired.LabelManagedBy: desired.ManagedBy}); err != nil {
				return err
			}
			for _, o := range list.Items {
				fmt.Fprintf(w, "%s\t%s\t%s\n", o.GetKind(), o.GetName(), summary(&o))
			}
		}
		_ = w.Flush()
		fmt.Println()
	}
	return nil
}

// summary picks the figure the plan set on a child.
func summary(o *unstructured.Unstructured) string {
	num := func(path ...string) int64 { n, _, _ := unstructured.NestedInt64(o.Object, path...); return n }
	str := func(path ...string) string { s, _, _ := unstructured.NestedString(o.Object, path...); return s }
	switch o.GetKind() {
	case "KafkaNodePool":
		return fmt.Sprintf("replicas=%d", num("spec", "replicas"))
	case "KafkaTopic":
		return fmt.Sprintf("partitions=%d replicas=%d", num("spec", "partitions"), num("spec", "replicas"))
	case "SparkApplication":
		return fmt.Sprintf("executors=%d (submitted) cores=%d serviceAccount=%s", num("spec", "executor", "instances"),
			num("spec", "executor", "cores"), str("spec", "driver", "serviceAccount"))
	case "ConfigMap":
		if o.GetLabels()[desired.LabelComponent] == desired.ComponentExecutorTarget {
			return "executor target=" + str("data", desired.ExecutorsKey)
		}
	case "RoleBinding":
		return fmt.Sprintf("%s/%s", str("roleRef", "kind"), str("roleRef", "name"))
	case "Elasticsearch":
		sets, _, _ := unstructured.NestedSlice(o.Object, "spec", "nodeSets")
		var parts []string
		for _, s := range sets {
			m, _ := s.(map[string]any)
			parts = append(parts, fmt.Sprintf("%v=%v", m["name"], m["count"]))
		}
		return strings.Join(parts, " ")
	}
	return ""
}
