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
