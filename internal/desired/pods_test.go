package desired

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
)

// The pods the upstream operators make from Strata's objects must start and stay safe on a real
// cluster: these tests pin what each builder sets for that (docs/security.md).

func TestSparkPodsRunWithTheImagesGroup(t *testing.T) {
	in := splitTiers(t)
	for _, tc := range []struct {
		fsGroup *int64
		want    int64
	}{{nil, 185}, {ptr.To[int64](2000), 2000}} {
		in.Pipeline.Spec.Spark.FSGroup = tc.fsGroup
		app := SparkApplication(in)
		for role, container := range map[string]string{"driver": SparkDriverContainer, "executor": SparkExecutorContainer} {
			if got := field(t, app, "spec", role, "template", "spec", "securityContext", "fsGroup"); got != tc.want {
				t.Errorf("%s fsGroup %v, want %d", role, got, tc.want)
			}
			if got := field(t, app, "spec", role, "template", "spec", "securityContext", "fsGroupChangePolicy"); got != "OnRootMismatch" {
				t.Errorf("%s fsGroupChangePolicy %v", role, got)
			}
			containers := field(t, app, "spec", role, "template", "spec", "containers").([]any)
			if len(containers) != 1 || containers[0].(map[string]any)["name"] != container {
				t.Errorf("%s template containers %v, want the one Spark fills in, %s", role, containers, container)
			}
		}
	}
}

func TestElasticsearchVirtualMemory(t *testing.T) {
	for _, choice := range []string{"", "MMapOff", "SysctlInitContainer", "NodeConfigured"} {
		in := splitTiers(t)
		in.Pipeline.Spec.Elasticsearch.VirtualMemory = choice
		for _, set := range field(t, Elasticsearch(in), "spec", "nodeSets").([]any) {
			s := set.(map[string]any)
			config := s["config"].(map[string]any)
			spec := s["podTemplate"].(map[string]any)["spec"].(map[string]any)
			mmap, hasMMap := config["node.store.allow_mmap"]
			inits, hasInit := spec["initContainers"]
			switch choice {
			case "", "MMapOff":
				if mmap != false || hasInit {
					t.Errorf("%q: node.store.allow_mmap %v, initContainers %v; want mmap off and no init container", choice, mmap, inits)
				}
			case "SysctlInitContainer":
				c, _ := inits.([]any)
				if hasMMap || len(c) != 1 || c[0].(map[string]any)["securityContext"].(map[string]any)["privileged"] != true {
					t.Errorf("%q: allow_mmap %v, initContainers %v; want one privileged sysctl container", choice, mmap, inits)
				}
			case "NodeConfigured":
				if hasMMap || hasInit {
					t.Errorf("%q: allow_mmap %v, initContainers %v; want neither", choice, mmap, inits)
				}
			}
		}
	}
}

func TestKafkaPoolsSpread(t *testing.T) {
	// "" turns rack awareness off: spread over nodes only.
	for _, key := range []string{"kubernetes.io/hostname", "topology.kubernetes.io/zone", ""} {
		in := splitTiers(t)
		in.Pipeline.Spec.Kafka.RackTopologyKey = key
		for _, pool := range NodePools(in) {
			spread := field(t, pool, "spec", "template", "pod", "topologySpreadConstraints").([]any)
			want := map[string]string{"kubernetes.io/hostname": "DoNotSchedule"}
			if key != "kubernetes.io/hostname" && key != "" {
				want[key] = "ScheduleAnyway"
			}
			if len(spread) != len(want) {
				t.Fatalf("%s, key %s: %d constraints, want %d", pool.GetName(), key, len(spread), len(want))
			}
			for _, c := range spread {
				m := c.(map[string]any)
				k, _ := m["topologyKey"].(string)
				labels := m["labelSelector"].(map[string]any)["matchLabels"].(map[string]any)
				if want[k] != m["whenUnsatisfiable"] || m["maxSkew"] != int64(1) ||
					labels[StrimziPoolLabel] != pool.GetName() || labels[StrimziClusterLabel] != KafkaName(in.Pipeline) {
					t.Errorf("%s: constraint %v, want %s over %s selecting the pool's pods", pool.GetName(), m, want[k], k)
				}
			}
		}
	}
}

// TestRackAwarenessOff: an empty spec.kafka.rackTopologyKey gives the Kafka cluster no rack (no
// broker.rack, no node affinity, no ClusterRoleBinding for Strimzi to make), and the
// Elasticsearch nodeSets spread over nodes without zone awareness.
func TestRackAwarenessOff(t *testing.T) {
	for _, key := range []string{"kubernetes.io/hostname", ""} {
		in := splitTiers(t)
		in.Pipeline.Spec.Kafka.RackTopologyKey = key
		rack, hasRack, _ := unstructured.NestedMap(Kafka(in).Object, "spec", "kafka", "rack")
		if hasRack != (key != "") || (hasRack && rack["topologyKey"] != key) {
			t.Errorf("key %q: spec.kafka.rack %v, want %v", key, rack, key != "")
		}
		sets, _, _ := unstructured.NestedSlice(Elasticsearch(in).Object, "spec", "nodeSets")
		for _, s := range sets {
			set := s.(map[string]any)
			spread, _, _ := unstructured.NestedSlice(set, "podTemplate", "spec", "topologySpreadConstraints")
			if len(spread) != 1 || spread[0].(map[string]any)["topologyKey"] != "kubernetes.io/hostname" || set["zoneAwareness"] != nil {
				t.Errorf("key %q: nodeSet %v spread %v zoneAwareness %v, want over kubernetes.io/hostname only", key, set["name"], spread, set["zoneAwareness"])
			}
		}
	}
}

// TestEveryPodTemplateCarriesThePipelinesLabels: the operator finds a pipeline's pods by
// strata.dev/pipeline alone (its pod cache holds no other pod), so every pod template of every
// workload must carry it, and strata.dev/workload to say which child the pod belongs to.
func TestEveryPodTemplateCarriesThePipelinesLabels(t *testing.T) {
	in := splitTiers(t)
	es, kafka, pools, app := Elasticsearch(in), Kafka(in), NodePools(in), SparkApplication(in)
	for _, tc := range []struct {
		obj      *unstructured.Unstructured
		path     []string
		workload string
	}{
		{es, []string{"spec", "nodeSets", "0", "podTemplate", "metadata", "labels"}, WorkloadElasticsearchMaster},
		{es, []string{"spec", "nodeSets", "1", "podTemplate", "metadata", "labels"}, WorkloadElasticsearchData},
		{pools[0], []string{"spec", "template", "pod", "metadata", "labels"}, WorkloadKafkaController},
		{pools[1], []string{"spec", "template", "pod", "metadata", "labels"}, WorkloadKafkaBroker},
		{kafka, []string{"spec", "entityOperator", "template", "pod", "metadata", "labels"}, WorkloadKafkaEntityOperator},
		{kafka, []string{"spec", "cruiseControl", "template", "pod", "metadata", "labels"}, WorkloadKafkaCruiseControl},
		{app, []string{"spec", "driver", "labels"}, WorkloadSparkDriver},
		{app, []string{"spec", "executor", "labels"}, WorkloadSparkExecutor},
	} {
		got := pathValue(tc.obj.Object, tc.path)
		labels, _ := got.(map[string]any)
		if labels[LabelPipeline] != in.Pipeline.Name || labels[LabelWorkload] != tc.workload {
			t.Errorf("%s %s: labels %v, want %s=%s and %s=%s", tc.obj.GetKind(), tc.path, got,
				LabelPipeline, in.Pipeline.Name, LabelWorkload, tc.workload)
		}
	}
}

// pathValue walks maps by key and lists by index (a decimal key).
func pathValue(v any, path []string) any {
	for _, k := range path {
		switch x := v.(type) {
		case map[string]any:
			v = x[k]
		case []any:
			i := 0
			for _, c := range k {
				i = i*10 + int(c-'0')
			}
			if i >= len(x) {
				return nil
			}
			v = x[i]
		default:
			return nil
		}
	}
	return v
}
