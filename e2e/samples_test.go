package e2e

// What the end-to-end suite applies to its kind cluster: config/samples, adapted to one kind
// node by testdata/pipeline-kind.yaml and nvmePaths, and the raised workload it scales to. These
// are built here, without the e2e build tag, so that `make test` checks them on every run: the
// API server's validation (offline) accepts them, the kind node carries the label the NVMe tier
// selects, and raising the workload does add a broker.

import (
	"context"
	"fmt"
	"path/filepath"
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/internal/controlplane"
	"github.com/strata-dev/strata/internal/plan"
	"github.com/strata-dev/strata/internal/schema"
)

const (
	// pipelineNamespace holds the sample pipeline; the Spark operator runs jobs there.
	pipelineNamespace = "strata-e2e"
	// sparkServiceAccount is the ServiceAccount the Spark operator's chart creates for its jobs;
	// the pipeline's driver runs as one the operator makes instead (desired.ServiceAccount).
	sparkServiceAccount = "strata-spark"
	// nvmePaths directories on the node back the NVMe tier, one local volume each: KRaft
	// controllers, brokers and Spark spill volumes each claim one.
	nvmePaths = 12
)

// kindSamples returns config/samples adapted to the kind cluster: the tiers (the NVMe tier with
// nvmePaths paths) and the pipeline (patched by testdata/pipeline-kind.yaml, in
// pipelineNamespace).
func kindSamples() (tiers []*unstructured.Unstructured, pipeline *unstructured.Unstructured, err error) {
	samples, err := controlplane.Samples()
	if err != nil {
		return nil, nil, err
	}
	patch, err := readYAML(filepath.Join("testdata", "pipeline-kind.yaml"))
	if err != nil {
		return nil, nil, err
	}
	for _, s := range samples {
		switch s.GetKind() {
		case "StorageTier":
			if _, ok, _ := unstructured.NestedMap(s.Object, "spec", "local"); ok {
				var paths []any
				for i := range nvmePaths {
					paths = append(paths, fmt.Sprintf("/mnt/nvme%d", i))
				}
				if err := unstructured.SetNestedSlice(s.Object, paths, "spec", "local", "paths"); err != nil {
					return nil, nil, err
				}
			}
			tiers = append(tiers, s)
		case "AnalyticsPipeline":
			if pipeline != nil {
				return nil, nil, fmt.Errorf("config/samples has more than one AnalyticsPipeline")
			}
			s.Object = mergePatch(s.Object, patch)
			s.SetNamespace(pipelineNamespace)
			pipeline = s
		}
	}
	if pipeline == nil || len(tiers) == 0 {
		return nil, nil, fmt.Errorf("config/samples: want a pipeline and its tiers")
	}
	return tiers, pipeline, nil
}

// nvmeTierPaths are the directories the suite creates on the node for the NVMe tier.
func nvmeTierPaths(tiers []*unstructured.Unstructured) []string {
	var out []string
	for _, t := range tiers {
		paths, _, _ := unstructured.NestedStringSlice(t.Object, "spec", "local", "paths")
		out = append(out, paths...)
	}
	return out
}

// raisedWorkload plans the pipeline and then larger workloads, and returns the broker count
// now and the smallest raised workload (messages per second) that needs more brokers.
func raisedWorkload(tiers []*unstructured.Unstructured, pipeline *unstructured.Unstructured) (brokers, raisedBrokers int32, raised int64, err error) {
	var p v1alpha1.AnalyticsPipeline
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(pipeline.Object, &p); err != nil {
		return 0, 0, 0, err
	}
	var ts []v1alpha1.StorageTier
	for _, u := range tiers {
		var t v1alpha1.StorageTier
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &t); err != nil {
			return 0, 0, 0, err
		}
		ts = append(ts, t)
	}
	now, err := plan.Fresh(&p, ts)
	if err != nil {
		return 0, 0, 0, err
	}
	base := p.Spec.Workload.MessagesPerSecond
	for step := int64(1); step <= 20; step++ {
		q := p.DeepCopy()
		q.Spec.Workload.MessagesPerSecond = base + base*step/10
		more, err := plan.Fresh(q, ts)
		if err != nil {
			return 0, 0, 0, err
		}
		if more.Brokers > now.Brokers {
			return now.Brokers, more.Brokers, q.Spec.Workload.MessagesPerSecond, nil
		}
	}
	return 0, 0, 0, fmt.Errorf("no workload up to 3x %d messages/s needs more than %d brokers", base, now.Brokers)
}

// mergePatch applies a JSON merge patch (RFC 7396) to obj.
func mergePatch(obj, patch map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range obj {
		out[k] = v
	}
	for k, v := range patch {
		switch pv := v.(type) {
		case nil:
			delete(out, k)
		case map[string]any:
			if ov, ok := out[k].(map[string]any); ok {
				out[k] = mergePatch(ov, pv)
			} else {
				out[k] = mergePatch(map[string]any{}, pv)
			}
		default:
			out[k] = v
		}
	}
	return out
}

// readYAML reads a one-document YAML file as unstructured objects hold it (integers as int64).
func readYAML(path string) (map[string]any, error) {
	objs, err := controlplane.ReadObjects(path)
	if err != nil {
		return nil, err
	}
	if len(objs) != 1 {
		return nil, fmt.Errorf("%s: %d documents, want 1", path, len(objs))
	}
	return objs[0].Object, nil
}

// TestKindSamples: the API server would accept what the suite applies, and the raised workload
// adds brokers within the pipeline's bounds.
func TestKindSamples(t *testing.T) {
	tiers, pipeline, err := kindSamples()
	if err != nil {
		t.Fatal(err)
	}
	adm, err := schema.New()
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range append(tiers, pipeline) {
		obj, err := schema.DecodeYAML(mustYAML(t, o.Object))
		if err != nil {
			t.Fatal(err)
		}
		if err := adm.Admit(context.Background(), obj); err != nil {
			t.Errorf("%s %s would be refused: %v", o.GetKind(), o.GetName(), err)
		}
	}
	brokers, raisedBrokers, raised, err := raisedWorkload(tiers, pipeline)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d brokers now; %d messages/s need %d", brokers, raised, raisedBrokers)
	checkKindPlan(t, tiers, pipeline, raised)
	if len(nvmeTierPaths(tiers)) != nvmePaths {
		t.Errorf("NVMe tier paths %v, want %d", nvmeTierPaths(tiers), nvmePaths)
	}
}

// checkKindPlan: the suite waits for every condition of the pipeline to be True, so its plan
// must carry the workload and fit its storage, also once raised; and the pods the plan sizes
// must fit one kind node (at most 4 cores and 12Gi requested: a CI runner's).
func checkKindPlan(t *testing.T, tiers []*unstructured.Unstructured, pipeline *unstructured.Unstructured, raised int64) {
	t.Helper()
	var p v1alpha1.AnalyticsPipeline
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(pipeline.Object, &p); err != nil {
		t.Fatal(err)
	}
	var ts []v1alpha1.StorageTier
	for _, u := range tiers {
		var tier v1alpha1.StorageTier
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &tier); err != nil {
			t.Fatal(err)
		}
		ts = append(ts, tier)
	}
	for _, mps := range []int64{p.Spec.Workload.MessagesPerSecond, raised} {
		q := p.DeepCopy()
		q.Spec.Workload.MessagesPerSecond = mps
		pl, err := plan.Fresh(q, ts)
		if err != nil {
			t.Fatal(err)
		}
		if pl.Unsatisfied != "" || pl.StorageUnsatisfied != "" {
			t.Errorf("%d messages/s: the plan is not satisfied (PlanValid would be False): %s %s", mps, pl.Unsatisfied, pl.StorageUnsatisfied)
		}
		count := map[string]int64{
			v1alpha1.RoleKafkaBroker: int64(pl.Brokers), v1alpha1.RoleKafkaController: 3,
			v1alpha1.RoleElasticsearchData: int64(pl.ElasticsearchDataNodes), v1alpha1.RoleElasticsearchMaster: int64(q.Spec.Elasticsearch.MasterNodes),
		}
		var cpu, mem int64
		for _, r := range pl.Resources {
			cpu += r.CPU.MilliValue() * count[r.Role]
			mem += r.Memory.Value() * count[r.Role]
		}
		if cpu > 4000 || mem > 12<<30 {
			t.Errorf("%d messages/s: the Kafka and Elasticsearch pods request %dm CPU and %dMi, more than a kind node has", mps, cpu, mem>>20)
		}
	}
}

// TestKindConfig: the kind node carries the labels the sample NVMe tier selects.
func TestKindConfig(t *testing.T) {
	cfg, err := readYAML(filepath.Join("testdata", "kind-config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	nodes, _, _ := unstructured.NestedSlice(cfg, "nodes")
	if len(nodes) != 1 {
		t.Fatalf("kind config: %d nodes, want 1 (the suite prepares the control-plane node)", len(nodes))
	}
	labels, _, _ := unstructured.NestedStringMap(nodes[0].(map[string]any), "labels")
	tiers, _, err := kindSamples()
	if err != nil {
		t.Fatal(err)
	}
	for _, tier := range tiers {
		sel, ok, _ := unstructured.NestedStringMap(tier.Object, "spec", "local", "nodeSelector", "matchLabels")
		if !ok {
			continue
		}
		for k, v := range sel {
			if labels[k] != v {
				t.Errorf("the kind node's labels %v lack %s=%s, which tier %s selects", labels, k, v, tier.GetName())
			}
		}
	}
	if got := mergePatch(map[string]any{"a": map[string]any{"b": 1, "c": 2}}, map[string]any{"a": map[string]any{"c": nil, "d": 3}}); !reflect.DeepEqual(got, map[string]any{"a": map[string]any{"b": 1, "d": 3}}) {
		t.Errorf("mergePatch: %v", got)
	}
}

func mustYAML(t *testing.T, obj map[string]any) []byte {
	t.Helper()
	b, err := yaml.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
