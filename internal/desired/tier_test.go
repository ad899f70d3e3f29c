package desired

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/internal/testutil"
	"github.com/strata-dev/strata/internal/testutil/gen"
)

// tierLocal is the sample nvme-local tier with two paths.
func tierLocal() *v1alpha1.StorageTier {
	t := gen.NVMeTier(gen.SetTierUID("6f1c2d3e-0000-4000-8000-00000000000a"),
		gen.SetLocal(map[string]string{"strata.dev/nvme": "true"}, "400Gi", "/mnt/nvme1", "/mnt/nvme0"))
	return &t
}

func tierNode(name string, labels map[string]string) corev1.Node {
	return corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
}

var (
	tierNVMe     = map[string]string{"strata.dev/nvme": "true"}
	tierLongName = strings.Repeat("a-very-long-tier-name.", 11) + "x" // 243 characters
	tierLongNode = strings.Repeat("node-name-segment.", 13) + "example.com"
	tierNodes    = []corev1.Node{tierNode("worker-b", map[string]string{"strata.dev/nvme": "true", HostnameLabel: "ip-10-0-0-2"}), tierNode("worker-a", tierNVMe), tierNode("worker-c", nil)}
	tierLong     = func() *v1alpha1.StorageTier {
		t := tierLocal()
		t.Name = tierLongName
		t.Spec.Local.Paths = []string{"/mnt/" + strings.Repeat("p", 200)}
		return t
	}
)

// tierGoldenCases are the tier builders' golden cases: the objects each builds.
func tierGoldenCases(t *testing.T) map[string][]client.Object {
	t.Helper()
	out := map[string][]client.Object{}
	for name, tc := range map[string]struct {
		tier  *v1alpha1.StorageTier
		nodes []corev1.Node
	}{
		"tier-local": {tierLocal(), tierNodes},
		"tier-long":  {tierLong(), []corev1.Node{tierNode(tierLongNode, tierNVMe)}},
	} {
		objs := []client.Object{StorageClass(tc.tier)}
		selected, err := SelectNodes(tc.tier, tc.nodes)
		if err != nil {
			t.Fatal(err)
		}
		for _, pv := range PersistentVolumes(tc.tier, selected) {
			objs = append(objs, pv)
		}
		if name == "tier-local" {
			objs = append(objs, CleanupPod(tc.tier, releasedVolume(objs[1].(*corev1.PersistentVolume)), "strata-system", "busybox:1.37.0", 15*time.Minute))
		}
		out[name] = objs
	}
	return out
}

// TestTierGolden compares the StorageClass and PersistentVolumes of local tiers with
// testdata/tier-<case>.<kind>-<name>.golden.yaml; `go test ./internal/desired -update` rewrites
// them (and removes those no longer built).
func TestTierGolden(t *testing.T) {
	for tc, objs := range tierGoldenCases(t) {
		t.Run(tc, func(t *testing.T) {
			files := map[string][]byte{}
			for _, o := range objs {
				gvk := o.GetObjectKind().GroupVersionKind()
				name := tc + "." + strings.ToLower(gvk.Kind) + "-" + o.GetName() + ".golden.yaml"
				if len(name) > 255 {
					name = tc + "." + strings.ToLower(gvk.Kind) + "-" + tierHash(16, o.GetName()) + ".golden.yaml"
				}
				got, err := yaml.Marshal(o)
				if err != nil {
					t.Fatal(err)
				}
				files[filepath.Join("testdata", name)] = got
			}
			testutil.GoldenSet(t, filepath.Join("testdata", tc+".*.golden.yaml"), files)
		})
	}
}

func TestPersistentVolumeName(t *testing.T) {
	// Pinned: a changed name would orphan every existing volume on upgrade.
	if got, want := PersistentVolumeName("nvme-local", "worker-a", "/mnt/nvme0"), "strata-nvme-local-"+tierHash(12, "nvme-local", "worker-a", "/mnt/nvme0"); got != want {
		t.Errorf("name = %q, want %q", got, want)
	}
	if got := PersistentVolumeName("nvme-local", "worker-a", "/mnt/nvme0"); got != "strata-nvme-local-1aab6b522535" {
		t.Errorf("name changed: %q (volumes created by earlier versions would no longer be found)", got)
	}
	names := map[string]string{}
	for _, tt := range []struct{ tier, node, path string }{
		{"nvme-local", "worker-a", "/mnt/nvme0"},
		{"nvme-local", "worker-a", "/mnt/nvme1"},
		{"nvme-local", "worker-b", "/mnt/nvme0"},
		{"ssd-local", "worker-a", "/mnt/nvme0"},
		{"a", "b", "/c"},
		{"a", "b/", "c"}, // the separator keeps (b, /c) and (b/, c) apart
		{tierLongName, "worker-a", "/mnt/nvme0"},
		{tierLongName + "y", "worker-a", "/mnt/nvme0"}, // same shortened prefix, other tier
		{tierLongName, tierLongNode, "/mnt/" + strings.Repeat("p", 1000)},
		{strings.Repeat("x", 253), "n", "/p"},
		{strings.Repeat("x", 235) + "." + strings.Repeat("y", 17), "n", "/p"}, // cut right after the dot
		{strings.Repeat("x", 235) + "-" + strings.Repeat("y", 17), "n", "/p"}, // cut right after the dash
	} {
		name := PersistentVolumeName(tt.tier, tt.node, tt.path)
		if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
			t.Errorf("%v: %q is not a valid name: %v", tt, name, errs)
		}
		if !strings.HasPrefix(name, "strata-"+tt.tier[:min(len(tt.tier), 20)]) {
			t.Errorf("%v: %q does not start with the tier's name", tt, name)
		}
		if name != PersistentVolumeName(tt.tier, tt.node, tt.path) {
			t.Errorf("%v: name not stable", tt)
		}
		if prev, ok := names[name]; ok {
			t.Errorf("%v: %q already names %s", tt, name, prev)
		}
		names[name] = tt.tier + " " + tt.node + " " + tt.path
	}
}

func TestLabelValue(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"worker-a", "worker-a"},
		{"ip-10-0-0-1.eu-west-1.compute.internal", "ip-10-0-0-1.eu-west-1.compute.internal"},
		{strings.Repeat("a", 63), strings.Repeat("a", 63)},
		{strings.Repeat("a", 64), strings.Repeat("a", 50) + "-" + tierHash(12, strings.Repeat("a", 64))},
		{strings.Repeat("a", 49) + "." + "b", strings.Repeat("a", 49) + ".b"},
		{strings.Repeat("a", 49) + ".bbbbbbbbbbbbbbbbbbbbbb", strings.Repeat("a", 49) + "-" + tierHash(12, strings.Repeat("a", 49)+".bbbbbbbbbbbbbbbbbbbbbb")},
		{"", ""},
		{"/", tierHash(12, "/")},
	} {
		got := LabelValue(tt.in)
		if got != tt.want {
			t.Errorf("LabelValue(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if errs := validation.IsValidLabelValue(got); len(errs) > 0 {
			t.Errorf("LabelValue(%q) = %q: %v", tt.in, got, errs)
		}
	}
	if a, b := LabelValue(tierLongNode), LabelValue(tierLongNode+"x"); a == b || len(a) > 63 {
		t.Errorf("long names sharing a prefix: %q and %q", a, b)
	}
}

func TestSelectNodes(t *testing.T) {
	tier := tierLocal()
	names := func(nodes []corev1.Node) []string {
		var out []string
		for _, n := range nodes {
			out = append(out, n.Name)
		}
		return out
	}
	got, err := SelectNodes(tier, append(tierNodes, tierNode("worker-a", tierNVMe)))
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"worker-a", "worker-b"}; !reflect.DeepEqual(names(got), want) {
		t.Errorf("selected %v, want %v", names(got), want)
	}

	tier.Spec.Local.NodeSelector = metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
		{Key: "strata.dev/nvme", Operator: metav1.LabelSelectorOpDoesNotExist}}}
	if got, _ := SelectNodes(tier, tierNodes); !reflect.DeepEqual(names(got), []string{"worker-c"}) {
		t.Errorf("DoesNotExist selected %v", names(got))
	}

	tier.Spec.Local.NodeSelector = metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
		{Key: "strata.dev/nvme", Operator: "Near"}}}
	if _, err := SelectNodes(tier, tierNodes); err == nil || !strings.Contains(err.Error(), "spec.local.nodeSelector") {
		t.Errorf("an invalid selector: err = %v, want one naming spec.local.nodeSelector", err)
	}

	dynamic := tierLocal()
	dynamic.Spec.Local = nil
	if got, err := SelectNodes(dynamic, tierNodes); err != nil || len(got) != 0 {
		t.Errorf("a dynamic tier selects %v (%v)", names(got), err)
	}
	if pvs := PersistentVolumes(dynamic, tierNodes); pvs != nil {
		t.Errorf("a dynamic tier has %d volumes", len(pvs))
	}
}

func TestPersistentVolumes(t *testing.T) {
	tier := tierLocal()
	selected, _ := SelectNodes(tier, tierNodes)
	pvs := PersistentVolumes(tier, selected)
	type row struct{ name, node, path, hostname, nodeLabel string }
	var got []row
	for _, pv := range pvs {
		terms := pv.Spec.NodeAffinity.Required.NodeSelectorTerms
		if len(terms) != 1 || len(terms[0].MatchExpressions) != 1 {
			t.Fatalf("%s: node affinity %+v", pv.Name, pv.Spec.NodeAffinity)
		}
		req := terms[0].MatchExpressions[0]
		if req.Key != HostnameLabel || req.Operator != corev1.NodeSelectorOpIn || len(req.Values) != 1 {
			t.Errorf("%s: node affinity %+v", pv.Name, req)
		}
		got = append(got, row{pv.Name, pv.Annotations[AnnotationNode], pv.Spec.Local.Path, req.Values[0], pv.Labels[LabelNode]})

		if c := pv.Spec.Capacity[corev1.ResourceStorage]; c.Cmp(q("400Gi")) != 0 {
			t.Errorf("%s: capacity %s", pv.Name, c.String())
		}
		if pv.Spec.StorageClassName != "strata-nvme-local" || pv.Spec.PersistentVolumeReclaimPolicy != corev1.PersistentVolumeReclaimRetain ||
			*pv.Spec.VolumeMode != corev1.PersistentVolumeFilesystem || !reflect.DeepEqual(pv.Spec.AccessModes, []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}) {
			t.Errorf("%s: spec %+v", pv.Name, pv.Spec)
		}
		if len(pv.OwnerReferences) != 0 {
			t.Errorf("%s: owner references %v: the garbage collector would delete Bound volumes with the tier", pv.Name, pv.OwnerReferences)
		}
		for k, v := range map[string]string{LabelManagedBy: "strata", LabelPartOf: "strata", LabelTier: "nvme-local"} {
			if pv.Labels[k] != v {
				t.Errorf("%s: label %s=%q, want %q", pv.Name, k, pv.Labels[k], v)
			}
		}
		if pv.Annotations[AnnotationTier] != "nvme-local" {
			t.Errorf("%s: annotations %v", pv.Name, pv.Annotations)
		}
	}
	want := []row{
		{PersistentVolumeName("nvme-local", "worker-a", "/mnt/nvme0"), "worker-a", "/mnt/nvme0", "worker-a", "worker-a"},
		{PersistentVolumeName("nvme-local", "worker-a", "/mnt/nvme1"), "worker-a", "/mnt/nvme1", "worker-a", "worker-a"},
		{PersistentVolumeName("nvme-local", "worker-b", "/mnt/nvme0"), "worker-b", "/mnt/nvme0", "ip-10-0-0-2", "worker-b"},
		{PersistentVolumeName("nvme-local", "worker-b", "/mnt/nvme1"), "worker-b", "/mnt/nvme1", "ip-10-0-0-2", "worker-b"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("volumes:\n got %v\nwant %v", got, want)
	}

	// Long names: valid label values and names, full names in the annotations.
	long := tierLong()
	pv := PersistentVolumes(long, []corev1.Node{tierNode(tierLongNode, nil)})[0]
	for _, k := range []string{LabelTier, LabelNode} {
		if errs := validation.IsValidLabelValue(pv.Labels[k]); len(errs) > 0 {
			t.Errorf("label %s=%q: %v", k, pv.Labels[k], errs)
		}
	}
	if pv.Annotations[AnnotationTier] != tierLongName || pv.Annotations[AnnotationNode] != tierLongNode || len(pv.Name) > 253 {
		t.Errorf("long names: %s %v", pv.Name, pv.Annotations)
	}
	if !reflect.DeepEqual(PersistentVolumes(long, []corev1.Node{tierNode(tierLongNode, nil)}), PersistentVolumes(tierLong(), []corev1.Node{tierNode(tierLongNode, nil)})) {
		t.Error("two builds from equal inputs differ")
	}
}

func TestStorageClass(t *testing.T) {
	sc := StorageClass(tierLocal())
	if sc.Name != "strata-nvme-local" || sc.Provisioner != "kubernetes.io/no-provisioner" ||
		*sc.ReclaimPolicy != corev1.PersistentVolumeReclaimRetain || *sc.VolumeBindingMode != storagev1.VolumeBindingWaitForFirstConsumer {
		t.Errorf("StorageClass %+v", sc)
	}
	if sc.Parameters != nil || sc.AllowVolumeExpansion != nil || sc.MountOptions != nil {
		t.Errorf("StorageClass sets more than it needs: %+v", sc)
	}
	refs := sc.OwnerReferences
	if len(refs) != 1 || refs[0].Kind != "StorageTier" || refs[0].APIVersion != "strata.dev/v1alpha1" ||
		refs[0].Name != "nvme-local" || refs[0].UID != "6f1c2d3e-0000-4000-8000-00000000000a" || !*refs[0].Controller {
		t.Errorf("owner references %+v", refs)
	}
	if got := sc.GetObjectKind().GroupVersionKind(); got != StorageClassGVK {
		t.Errorf("kind %v", got)
	}
}

// TestVolumeNodeTerm: a volume selects its node by hostname label, by name as a label value
// when the node has none and the name fits one, and by metadata.name in matchFields when it
// does not (a label value over 63 characters makes the API server refuse the volume).
func TestVolumeNodeTerm(t *testing.T) {
	for _, tc := range []struct {
		name   string
		labels map[string]string
		want   string
	}{
		{"worker-1", map[string]string{HostnameLabel: "host-1"}, "expr kubernetes.io/hostname=host-1"},
		{"worker-2", nil, "expr kubernetes.io/hostname=worker-2"},
		{tierLongNode, nil, "field metadata.name=" + tierLongNode},
		{tierLongNode, map[string]string{HostnameLabel: "short"}, "expr kubernetes.io/hostname=short"},
	} {
		term := nodeTerm(corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: tc.name, Labels: tc.labels}})
		var got []string
		for _, r := range term.MatchExpressions {
			got = append(got, "expr "+r.Key+"="+strings.Join(r.Values, ","))
		}
		for _, r := range term.MatchFields {
			got = append(got, "field "+r.Key+"="+strings.Join(r.Values, ","))
		}
		if len(got) != 1 || got[0] != tc.want {
			t.Errorf("node %.20s… labels %v: %v, want [%s]", tc.name, tc.labels, got, tc.want)
		}
	}
}
