package v1alpha1_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/internal/controlplane"
)

var (
	k8s client.Client
	ns  string
)

func TestMain(m *testing.M) {
	ctx := context.Background()
	env, err := controlplane.Start(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := func() int {
		defer env.Stop()
		scheme := runtime.NewScheme()
		_ = clientgoscheme.AddToScheme(scheme)
		_ = apiextensionsv1.AddToScheme(scheme)
		_ = v1alpha1.AddToScheme(scheme)
		c, err := client.New(env.Config, client.Options{Scheme: scheme})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		// Strict: a misspelt field is an error, as with `kubectl apply`'s default.
		k8s = client.WithFieldValidation(c, "Strict")
		if ns, err = controlplane.NewNamespace(ctx, c, "admission"); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		return m.Run()
	}()
	os.Exit(code)
}

// TestCRDsInstall checks that Strata's CRDs and every upstream CRD the operator writes are
// installed and established in the control plane.
func TestCRDsInstall(t *testing.T) {
	for _, name := range controlplane.CRDNames {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := k8s.Get(context.Background(), client.ObjectKey{Name: name}, crd); err != nil {
			t.Errorf("CRD %s: %v", name, err)
			continue
		}
		established := false
		for _, c := range crd.Status.Conditions {
			if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
				established = true
			}
		}
		if !established {
			t.Errorf("CRD %s is not established", name)
		}
	}
}

// TestSamplesAccepted creates every sample for real and checks that defaults were applied.
func TestSamplesAccepted(t *testing.T) {
	ctx := context.Background()
	objs, err := controlplane.Samples()
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) < 3 {
		t.Fatalf("want at least a pipeline and two tiers in config/samples, got %d objects", len(objs))
	}
	for _, o := range objs {
		o.SetNamespace(namespaceFor(o))
		if err := k8s.Create(ctx, o); err != nil {
			t.Errorf("sample %s %s rejected: %v", o.GetKind(), o.GetName(), err)
		}
	}
	p := &v1alpha1.AnalyticsPipeline{}
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "sensors"}, p); err != nil {
		t.Fatal(err)
	}
	if p.Spec.VolumeReclaimPolicy != "Retain" || p.Spec.Elasticsearch.MasterNodes != 3 || p.Spec.Workload.ConsumerMessagesPerSecond != 0 {
		t.Errorf("defaults not applied: volumeReclaimPolicy=%q masterNodes=%d", p.Spec.VolumeReclaimPolicy, p.Spec.Elasticsearch.MasterNodes)
	}
}

// TestDefaults creates a pipeline with only the required fields and checks docs/api.md's defaults.
func TestDefaults(t *testing.T) {
	u := pipeline(t)
	for _, path := range [][]string{
		{"spec", "workload", "producers"}, {"spec", "network", "efficiencyPercent"},
		{"spec", "network", "targetUtilizationPercent"}, {"spec", "kafka", "rackTopologyKey"},
		{"spec", "kafka", "topic"}, {"spec", "elasticsearch", "shards"}, {"spec", "autoscaling"},
	} {
		unstructured.RemoveNestedField(u.Object, path...)
	}
	u.SetName("defaults")
	if err := k8s.Create(context.Background(), u); err != nil {
		t.Fatal(err)
	}
	p := &v1alpha1.AnalyticsPipeline{}
	if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(u), p); err != nil {
		t.Fatal(err)
	}
	got := fmt.Sprintf("producers=%d efficiency=%d target=%d rack=%s partitions=%d shards=%d fsGroup=%d vm=%s",
		p.Spec.Workload.Producers, p.Spec.Network.EfficiencyPercent, p.Spec.Network.TargetUtilizationPercent,
		p.Spec.Kafka.RackTopologyKey, p.Spec.Kafka.Topic.Partitions, p.Spec.Elasticsearch.Shards,
		ptr.Deref(p.Spec.Spark.FSGroup, 0), p.Spec.Elasticsearch.VirtualMemory)
	want := "producers=1 efficiency=90 target=80 rack=kubernetes.io/hostname partitions=0 shards=0 fsGroup=185 vm=MMapOff"
	if got != want {
		t.Errorf("defaults:\n got %s\nwant %s", got, want)
	}

	// An empty rack key is accepted and kept (rack awareness off), not defaulted: defaults fill
	// absent fields only.
	u = pipeline(t)
	if err := unstructured.SetNestedField(u.Object, "", "spec", "kafka", "rackTopologyKey"); err != nil {
		t.Fatal(err)
	}
	u.SetName("rack-off")
	if err := k8s.Create(context.Background(), u); err != nil {
		t.Fatalf("an empty spec.kafka.rackTopologyKey refused: %v", err)
	}
	got2 := &unstructured.Unstructured{}
	got2.SetGroupVersionKind(u.GroupVersionKind())
	if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(u), got2); err != nil {
		t.Fatal(err)
	}
	if key, ok, _ := unstructured.NestedString(got2.Object, "spec", "kafka", "rackTopologyKey"); !ok || key != "" {
		t.Errorf("rackTopologyKey %q (present %v), want \"\" kept", key, ok)
	}
}

// TestPodSafetyAccepts: what the pod-safety rules must not refuse: a user's own Spark settings,
// Spark 3 on one tier (no plugin), a group of the user's choice, each virtual-memory choice.
func TestPodSafetyAccepts(t *testing.T) {
	for i, change := range []map[string]any{
		{"spec.spark.sparkConf": map[string]any{"spark.sql.shuffle.partitions": "200", "spark.kubernetes.executor.label.team": "a"}},
		{"spec.spark.sparkVersion": "3.5.1", "spec.spark.shuffle.dataTier": nil, "spec.spark.shuffle.dataSize": nil},
		{"spec.spark.sparkVersion": "4.1.0-preview1"},
		{"spec.spark.fsGroup": int64(1000)},
		{"spec.elasticsearch.virtualMemory": "SysctlInitContainer"},
		{"spec.elasticsearch.virtualMemory": "NodeConfigured"},
	} {
		u := pipeline(t)
		for path, v := range change {
			set(u, path, v)
		}
		u.SetName(fmt.Sprintf("accepted-%d", i))
		if err := k8s.Create(context.Background(), u, client.DryRunAll); err != nil {
			t.Errorf("%v refused: %v", change, err)
		}
	}
}

func namespaceFor(o *unstructured.Unstructured) string {
	if o.GetKind() == "StorageTier" {
		return ""
	}
	return ns
}

// sample returns a fresh copy of the sample object of the given kind and name.
func sample(t *testing.T, kind, name string) *unstructured.Unstructured {
	t.Helper()
	objs, err := controlplane.Samples()
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		if o.GetKind() == kind && o.GetName() == name {
			o.SetNamespace(namespaceFor(o))
			return o
		}
	}
	t.Fatalf("no sample %s %s", kind, name)
	return nil
}

func pipeline(t *testing.T) *unstructured.Unstructured {
	return sample(t, "AnalyticsPipeline", "sensors")
}

// set sets a field given as a dotted path; a nil value removes it.
func set(u *unstructured.Unstructured, path string, value any) {
	fields := strings.Split(path, ".")
	if value == nil {
		unstructured.RemoveNestedField(u.Object, fields...)
		return
	}
	if err := unstructured.SetNestedField(u.Object, runtime.DeepCopyJSONValue(value), fields...); err != nil {
		panic(err)
	}
}
