package desired

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/internal/plan"
	"github.com/strata-dev/strata/internal/testutil/gen"
)

// spreads returns every topologySpreadConstraints list in obj, by its path.
func spreads(obj any, path string, out map[string][]any) {
	switch v := obj.(type) {
	case map[string]any:
		for k, child := range v {
			if list, ok := child.([]any); ok && k == "topologySpreadConstraints" {
				out[path+"."+k] = list
				continue
			}
			spreads(child, path+"."+k, out)
		}
	case []any:
		for i, child := range v {
			spreads(child, fmt.Sprintf("%s[%d]", path, i), out)
		}
	}
}

// TestSpreadConstraintsHonorTaintsAndAffinity: every topology spread constraint of every object
// counts only the nodes the pods tolerate and whose labels their node affinity admits. With the
// default nodeTaintsPolicy (Ignore), a tainted control-plane node counts as a domain holding no
// pod, and a hard constraint keeps pods Pending that good nodes have room for.
func TestSpreadConstraintsHonorTaintsAndAffinity(t *testing.T) {
	for _, key := range []string{"kubernetes.io/hostname", "topology.kubernetes.io/zone", "rack.example/name", ""} {
		for _, tc := range testCases(t) {
			tc.in.Pipeline.Spec.Kafka.RackTopologyKey = key
			found := 0
			for _, u := range All(tc.in) {
				lists := map[string][]any{}
				spreads(u.Object, u.GetKind(), lists)
				for path, list := range lists {
					for _, c := range list {
						found++
						m := c.(map[string]any)
						if m["nodeTaintsPolicy"] != "Honor" || m["nodeAffinityPolicy"] != "Honor" {
							t.Errorf("%s, key %q: %s/%s %s: %v, want nodeTaintsPolicy and nodeAffinityPolicy Honor",
								tc.name, key, u.GetKind(), u.GetName(), path, m)
						}
					}
				}
			}
			if found < 3 { // the two pools and the two nodeSets have at least one each
				t.Errorf("%s, key %q: %d spread constraints in all, want the pools' and the nodeSets'", tc.name, key, found)
			}
		}
	}
}

// TestElasticsearchSpread: the masters are the quorum and must not share a node while nodes
// allow (the real scheduler put all three on one with a soft constraint); the data nodes keep
// their soft spread over the failure domains.
func TestElasticsearchSpread(t *testing.T) {
	const host, zone = "kubernetes.io/hostname", "topology.kubernetes.io/zone"
	for _, tt := range []struct {
		key          string
		master, data map[string]string // topology key → whenUnsatisfiable
	}{
		{host, map[string]string{host: "DoNotSchedule"}, map[string]string{host: "ScheduleAnyway"}},
		{"", map[string]string{host: "DoNotSchedule"}, map[string]string{host: "ScheduleAnyway"}},
		{zone, map[string]string{host: "DoNotSchedule", zone: "ScheduleAnyway"}, map[string]string{zone: "ScheduleAnyway"}},
		{"rack.example/name", map[string]string{host: "DoNotSchedule", "rack.example/name": "ScheduleAnyway"},
			map[string]string{"rack.example/name": "ScheduleAnyway"}},
	} {
		in := splitTiers(t)
		in.Pipeline.Spec.Kafka.RackTopologyKey = tt.key
		for _, s := range field(t, Elasticsearch(in), "spec", "nodeSets").([]any) {
			set := s.(map[string]any)
			want := tt.data
			if set["name"] == MasterNodeSet {
				want = tt.master
			}
			list, _, _ := unstructured.NestedSlice(set, "podTemplate", "spec", "topologySpreadConstraints")
			got := map[string]string{}
			for _, c := range list {
				m := c.(map[string]any)
				got[m["topologyKey"].(string)] = m["whenUnsatisfiable"].(string)
				labels := m["labelSelector"].(map[string]any)["matchLabels"].(map[string]any)
				if m["maxSkew"] != int64(1) || labels["elasticsearch.k8s.elastic.co/statefulset-name"] !=
					ElasticsearchStatefulSetName(in.Pipeline, set["name"].(string)) {
					t.Errorf("key %q: nodeSet %v constraint %v", tt.key, set["name"], m)
				}
			}
			if len(list) != len(want) || !reflect.DeepEqual(got, want) {
				t.Errorf("key %q: nodeSet %v spread %v, want %v", tt.key, set["name"], got, want)
			}
		}
	}
}

// localTierSelector is a local tier's node selector with both kinds of terms.
var localTierSelector = metav1.LabelSelector{
	MatchLabels: map[string]string{"disk": "nvme"},
	MatchExpressions: []metav1.LabelSelectorRequirement{
		{Key: "node-role.kubernetes.io/control-plane", Operator: metav1.LabelSelectorOpDoesNotExist},
		{Key: "topology.kubernetes.io/zone", Operator: metav1.LabelSelectorOpIn, Values: []string{"a", "b"}},
	},
}

// localTierAffinity is the node affinity localTierSelector gives.
var localTierAffinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
	RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
		MatchExpressions: []corev1.NodeSelectorRequirement{
			{Key: "disk", Operator: corev1.NodeSelectorOpIn, Values: []string{"nvme"}},
			{Key: "node-role.kubernetes.io/control-plane", Operator: corev1.NodeSelectorOpDoesNotExist},
			{Key: "topology.kubernetes.io/zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"a", "b"}},
		},
	}}},
}}

// withSelector returns tiers with nvme-local selecting its nodes by sel.
func withSelector(tiers []v1alpha1.StorageTier, sel metav1.LabelSelector) []v1alpha1.StorageTier {
	out := make([]v1alpha1.StorageTier, len(tiers))
	for i := range tiers {
		out[i] = *tiers[i].DeepCopy()
		if out[i].Spec.Local != nil && out[i].Name == "nvme-local" {
			out[i].Spec.Local.NodeSelector = *sel.DeepCopy()
		}
	}
	return out
}

// podAffinities returns the affinity of every pod template the objects give: the two pools,
// the two nodeSets, the driver and the executors (nil where none).
func podAffinities(t *testing.T, in Inputs) map[string]*corev1.Affinity {
	t.Helper()
	out := map[string]*corev1.Affinity{}
	decode := func(name string, raw map[string]any, path ...string) {
		v, ok, _ := unstructured.NestedFieldNoCopy(raw, path...)
		if !ok {
			out[name] = nil
			return
		}
		b, _ := json.Marshal(v)
		var a corev1.Affinity
		if err := json.Unmarshal(b, &a); err != nil {
			t.Fatalf("%s affinity %v: %v", name, v, err)
		}
		out[name] = &a
	}
	pools := NodePools(in)
	decode("controller", pools[0].Object, "spec", "template", "pod", "affinity")
	decode("broker", pools[1].Object, "spec", "template", "pod", "affinity")
	for _, s := range field(t, Elasticsearch(in), "spec", "nodeSets").([]any) {
		set := s.(map[string]any)
		decode(set["name"].(string), set, "podTemplate", "spec", "affinity")
	}
	app := SparkApplication(in)
	decode("driver", app.Object, "spec", "driver", "template", "spec", "affinity")
	decode("executor", app.Object, "spec", "executor", "template", "spec", "affinity")
	return out
}

// TestLocalTierNodeAffinity: pods whose volumes are on a local tier must run on its nodes, and
// say so in their own node affinity (a local volume's node affinity is not the pod's), so that
// their spread counts only nodes that can host them; pods on other tiers get none.
func TestLocalTierNodeAffinity(t *testing.T) {
	onLocal := func(in Inputs) Inputs {
		in.Tiers = withSelector(in.Tiers, localTierSelector)
		return in
	}
	// Controllers and masters on nvme-local too, planned so (their metadata volumes' tier).
	metadataOnLocal := func(t *testing.T) Inputs {
		f := splitTiersFixture()
		f.pipeline.Spec.Kafka.Controllers = &v1alpha1.KafkaControllersSpec{Storage: v1alpha1.MetadataStorage{Tier: "nvme-local"}}
		f.pipeline.Spec.Elasticsearch.Masters = &v1alpha1.ElasticsearchMastersSpec{Storage: v1alpha1.MetadataStorage{Tier: "nvme-local"}}
		tiers := withSelector(fixtureTiers(), localTierSelector)
		r, err := plan.Compute(f.pipeline, tiers, f.obs)
		pl := r.Plan
		if err != nil {
			t.Fatalf("the planner refuses metadata on nvme-local: %v", err)
		}
		return Inputs{Pipeline: f.pipeline, Plan: pl, Tiers: tiers}
	}
	all := []string{"controller", "broker", MasterNodeSet, DataNodeSet, "driver", "executor"}
	for _, tt := range []struct {
		name  string
		in    func(*testing.T) Inputs
		local []string // the pods that get localTierAffinity; the others none
	}{
		// Kafka log, spill and Elasticsearch data on nvme-local, shuffle data on st1.
		{"split tiers", func(t *testing.T) Inputs { return onLocal(splitTiers(t)) },
			[]string{"broker", DataNodeSet, "executor"}},
		{"metadata on the local tier", metadataOnLocal,
			[]string{"controller", "broker", MasterNodeSet, DataNodeSet, "executor"}},
		{"strata's job", func(t *testing.T) Inputs { return onLocal(strataJob(t)) },
			[]string{"broker", DataNodeSet, "executor"}},
		// Everything on a dynamic SSD tier.
		{"non-local tier", func(t *testing.T) Inputs { return onLocal(singleTierDelete(t)) }, nil},
		// A tier the inputs do not hold (the controller passes only those that exist).
		{"tiers unknown", func(t *testing.T) Inputs { in := splitTiers(t); in.Tiers = nil; return in }, nil},
		// A local tier on every node needs no affinity (an empty term would match no node).
		{"tier on every node", func(t *testing.T) Inputs {
			in := splitTiers(t)
			in.Tiers = withSelector(in.Tiers, metav1.LabelSelector{})
			return in
		}, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := podAffinities(t, tt.in(t))
			for _, pod := range all {
				var want *corev1.Affinity
				for _, l := range tt.local {
					if l == pod {
						want = localTierAffinity
					}
				}
				if !reflect.DeepEqual(got[pod], want) {
					t.Errorf("%s affinity %+v, want %+v", pod, got[pod], want)
				}
			}
		})
	}
}

// TestTierAffinityOfTwoLocalTiers: executors whose spill and shuffle data volumes are on two
// local tiers need nodes with both disks: every requirement of both, each once.
func TestTierAffinityOfTwoLocalTiers(t *testing.T) {
	other := gen.NVMeTier(gen.SetTierName("hdd-local"), gen.SetLocal(nil, "1Ti", "/mnt/hdd0"))
	other.Spec.Local.NodeSelector = metav1.LabelSelector{
		MatchLabels:      map[string]string{"disk": "nvme", "hdd": "yes"},
		MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "node-role.kubernetes.io/control-plane", Operator: metav1.LabelSelectorOpDoesNotExist}},
	}
	in := Inputs{Tiers: append(withSelector(fixtureTiers(), localTierSelector), other)}
	got := tierAffinity(in, "nvme-local", "hdd-local", "hdd-st1")
	b, _ := json.Marshal(got)
	var a corev1.Affinity
	if err := json.Unmarshal(b, &a); err != nil {
		t.Fatal(err)
	}
	want := localTierAffinity.DeepCopy()
	term := &want.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms[0]
	term.MatchExpressions = append(term.MatchExpressions,
		corev1.NodeSelectorRequirement{Key: "hdd", Operator: corev1.NodeSelectorOpIn, Values: []string{"yes"}})
	if !reflect.DeepEqual(&a, want) {
		t.Errorf("tierAffinity = %+v, want %+v", a, want)
	}
}
