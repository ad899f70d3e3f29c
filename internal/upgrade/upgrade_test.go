package upgrade

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/internal/lab"
	"github.com/strata-dev/strata/internal/testutil"
	"github.com/strata-dev/strata/internal/testutil/gen"
	"github.com/strata-dev/strata/internal/upstream"
)

// EnvRun runs the upgrade (set by `make upgrade-test`): it builds two managers and runs every
// golden case on real controllers, minutes on a loaded machine, more than `make test` affords.
const EnvRun = "STRATA_UPGRADE_TEST"

// wait is how long an operator may take to converge: generous, the waits end as soon as it has.
const wait = 5 * time.Minute

// strataManagers are the field managers of the operator's writes: its server-side applies
// ("strata", controllers.FieldOwner) and its patches (client-go's default, the binary's name).
var strataManagers = map[string]bool{"strata": true, "manager": true}

// TestUpgradeWithoutRestarts installs the previous release with Helm, lets its operator converge
// on a pipeline of every golden case, upgrades as docs/install.md says, lets the working tree's
// operator converge, and holds the writes to the children to CHANGELOG.md.
func TestUpgradeWithoutRestarts(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the upgrade runs the upstream harness and two releases of the operator")
	}
	if os.Getenv(EnvRun) == "" {
		t.Skipf("not checked: the upgrade from the previous release (set %s=1, as `make upgrade-test` does)", EnvRun)
	}
	root := testutil.Root()
	rel, err := PreviousRelease()
	if err != nil {
		t.Fatal(err)
	}
	if rel, err = rel.Resolve(root); err != nil {
		var shallow ErrNotInClone
		if errors.As(err, &shallow) {
			t.Skipf("not checked: the upgrade from %s: %v", rel.Tag, err)
		}
		t.Fatal(err)
	}
	notes, err := os.ReadFile(filepath.Join(root, "CHANGELOG.md"))
	if err != nil {
		t.Fatal(err)
	}
	allowed, err := AllowedChanges(string(notes), rel.Tag)
	if err != nil {
		t.Fatal(err)
	}

	// The previous release: its source, its manager and CLI, its chart.
	work := t.TempDir()
	oldSrc := filepath.Join(work, "src-"+rel.Tag)
	if err := rel.Extract(root, oldSrc); err != nil {
		t.Fatal(err)
	}
	started := time.Now()
	oldBin, oldCLI, newCLI := filepath.Join(work, "old", "manager"), filepath.Join(work, "old", "strata"), filepath.Join(work, "new", "strata")
	newBin := filepath.Join(work, "new", "manager")
	lab.BuildManager(t, oldSrc, oldBin)
	buildCLI(t, oldSrc, oldCLI)
	lab.BuildManager(t, root, newBin)
	buildCLI(t, root, newCLI)
	t.Logf("%s (by its %s, %s) and the working tree built in %s", rel.Tag, rel.Resolved, rel.Commit[:12], time.Since(started).Round(time.Second))

	cases, tiers := scenarios(t)
	var namespaces []string
	for _, c := range cases {
		namespaces = append(namespaces, c.Namespace)
	}
	h := upstream.Start(t, upstream.Options{JobNamespaces: namespaces, WithoutStrimzi: true, WithoutStrata: true})
	ctx := context.Background()

	// A user's installation of the previous release: `helm install` (its crds/ with it).
	values := []string{"spark.allowUserServiceAccounts=true"}
	oldChartDir := filepath.Join(oldSrc, "charts", "strata")
	helm(t, h, "install", "strata", oldChartDir, "--namespace", "strata-system", "--create-namespace", "--set", values[0])
	oldChart := upstream.HarnessChart(lab.RenderChartAt(t, oldChartDir, "strata", "strata-system", values...))
	fixtures := []client.Object{upstream.StorageClass("gp3")}
	for _, tier := range tiers {
		fixtures = append(fixtures, tier.DeepCopy())
	}
	oldDir := filepath.Join(work, "operator-old")
	old := lab.RunOperatorBinary(t, oldDir, oldBin, oldChart, h.Config, h.Client, fixtures...)
	for _, p := range cases {
		if err := h.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: p.Namespace}}); err != nil {
			t.Fatal(err)
		}
		if sa := p.Spec.Spark.ServiceAccountName; sa != "" {
			if err := h.Client.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: p.Namespace, Name: sa}}); err != nil {
				t.Fatal(err)
			}
		}
		if err := h.Client.Create(ctx, p.DeepCopy()); err != nil {
			t.Logf("%s/%s: %s's API server refuses it, not upgraded: %v", p.Namespace, p.Name, rel.Tag, err)
			continue
		}
	}
	oldImage := ingestImage(t, oldChart.Args)
	cases = convergeAll(ctx, t, h.Client, cases, func(p *v1alpha1.AnalyticsPipeline) upstream.GoldenCase {
		return render(t, oldCLI, oldImage, p, tiers)
	}, rel.Tag, func() {
		if !old.Running() {
			t.Fatalf("%s's manager exited before the upgrade", rel.Tag)
		}
	})
	if len(cases) == 0 {
		t.Fatalf("%s plans none of the golden cases", rel.Tag)
	}
	before := podSpecs(ctx, t, h.Client, cases)

	// Every write from here on, to every kind Strata writes.
	recCtx, stop := context.WithCancel(ctx)
	defer stop()
	dc, err := dynamic.NewForConfig(h.Config)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := Record(recCtx, dc, childResources(t, h.Client))
	if err != nil {
		t.Fatal(err)
	}

	// The upgrade, as docs/install.md says: the new CRDs, then helm upgrade, whose new
	// Deployment's pod replaces the old one's.
	upgradeStarted := time.Now()
	newChartDir := filepath.Join(root, "charts", "strata")
	// Without --force-conflicts, kubectl's apply conflicts with Helm, which created the CRDs
	// (field manager "helm") and owns every field of them: a dry run says which.
	if conflicts := applyCRDs(ctx, t, h.Client, filepath.Join(newChartDir, "crds"), false); len(conflicts) > 0 {
		t.Logf("without --force-conflicts, kubectl's server-side apply of the new CRDs conflicts with Helm:\n  %s", strings.Join(conflicts, "\n  "))
	}
	applyCRDs(ctx, t, h.Client, filepath.Join(newChartDir, "crds"), true)
	helm(t, h, "upgrade", "strata", newChartDir, "--namespace", "strata-system", "--reuse-values")
	old.Stop()
	newChart := upstream.HarnessChart(lab.RenderChartAt(t, newChartDir, "strata", "strata-system", values...))
	op := lab.RunOperatorBinary(t, filepath.Join(work, "operator-new"), newBin, newChart, h.Config, h.Client)
	newImage := ingestImage(t, newChart.Args)
	restarts := 0
	keepRunning := func() {
		// The Deployment's pod restarts a manager that exited (a lost leader election, when the
		// loaded machine's API server answers the lease's renewal late), as a kubelet does.
		if !op.Running() {
			restarts++
			t.Logf("the working tree's manager exited (restart %d): started again, as the kubelet would", restarts)
			op.Restart(t)
		}
	}
	if got := convergeAll(ctx, t, h.Client, cases, func(p *v1alpha1.AnalyticsPipeline) upstream.GoldenCase {
		return render(t, newCLI, newImage, p, tiers)
	}, "the working tree", keepRunning); len(got) != len(cases) {
		t.Errorf("the working tree's operator plans %d of the %d pipelines %s planned", len(got), len(cases), rel.Tag)
	}
	t.Logf("upgraded and converged in %s (the new manager restarted %d times)", time.Since(upgradeStarted).Round(time.Second), restarts)
	after := podSpecs(ctx, t, h.Client, cases)

	t.Run("PodTemplates", func(t *testing.T) { checkPodTemplates(t, before, after, allowed) })
	t.Run("StoredObjectsValid", func(t *testing.T) { checkStored(ctx, t, h.Client, cases, tiers) })
	writes, err := rec.Writes()
	if err != nil {
		t.Error(err)
	}
	reportWrites(t, writes)
	h.Alive(t)
}

// scenarios are the pipelines of every golden case (gen.GoldenPipelines) and the sample, each in
// a namespace of its own, and the tiers they name: the samples', the local one with five disks
// per node so that every pipeline's claims fit at once, and the ssd tier of single-tier-delete.
func scenarios(t *testing.T) ([]*v1alpha1.AnalyticsPipeline, []*v1alpha1.StorageTier) {
	sampleTiers, sample := upstream.Samples(t)
	var tiers []*v1alpha1.StorageTier
	for _, o := range sampleTiers {
		tier := o.(*v1alpha1.StorageTier).DeepCopy()
		if tier.Spec.Local != nil {
			tier.Spec.Local.Paths = []string{"/mnt/nvme0", "/mnt/nvme1", "/mnt/nvme2", "/mnt/nvme3", "/mnt/nvme4"}
		}
		tiers = append(tiers, tier)
	}
	ssd := gen.GoldenSSDTier()
	tiers = append(tiers, &v1alpha1.StorageTier{ObjectMeta: metav1.ObjectMeta{Name: ssd.Name}, Spec: ssd.Spec})

	named := append([]gen.GoldenPipeline{{Case: "sample", Pipeline: sample}}, gen.GoldenPipelines()...)
	var out []*v1alpha1.AnalyticsPipeline
	for _, g := range named {
		p := &v1alpha1.AnalyticsPipeline{ObjectMeta: metav1.ObjectMeta{Namespace: "up-" + g.Case, Name: g.Pipeline.Name},
			Spec: *g.Pipeline.Spec.DeepCopy()}
		out = append(out, p)
	}
	return out, tiers
}

// convergeAll waits until the operator (of release) has planned each pipeline and made its
// children as render prints them; a pipeline it does not plan (PlanValid=False) is left out of
// what follows, and said so.
func convergeAll(ctx context.Context, t *testing.T, c client.Client, cases []*v1alpha1.AnalyticsPipeline,
	rendered func(*v1alpha1.AnalyticsPipeline) upstream.GoldenCase, release string, keepRunning func()) []*v1alpha1.AnalyticsPipeline {
	t.Helper()
	var out []*v1alpha1.AnalyticsPipeline
	for _, p := range cases {
		got := &v1alpha1.AnalyticsPipeline{}
		var planValid *metav1.Condition
		testutil.Eventually(t, wait, fmt.Sprintf("%s to plan %s/%s", release, p.Namespace, p.Name), func() error {
			keepRunning()
			if err := c.Get(ctx, client.ObjectKeyFromObject(p), got); err != nil {
				return err
			}
			if planValid = meta.FindStatusCondition(got.Status.Conditions, v1alpha1.ConditionPlanValid); planValid == nil ||
				got.Status.ObservedGeneration != got.Generation {
				return fmt.Errorf("generation %d observed %d, PlanValid %v", got.Generation, got.Status.ObservedGeneration, planValid)
			}
			return nil
		})
		if planValid.Status != metav1.ConditionTrue {
			t.Logf("%s/%s: %s does not plan it (PlanValid %s %s: %s), not upgraded", p.Namespace, p.Name, release, planValid.Status, planValid.Reason, planValid.Message)
			continue
		}
		r := rendered(p)
		start := time.Now()
		testutil.Eventually(t, wait, fmt.Sprintf("%s's children of %s/%s as its render prints them", release, p.Namespace, p.Name),
			func() error { keepRunning(); return converged(ctx, c, p, r) })
		t.Logf("%s/%s: %s converged (%d objects as render prints them) in %s", p.Namespace, p.Name, release, len(r.Objects), time.Since(start).Round(100*time.Millisecond))
		out = append(out, p)
	}
	return out
}

// podSpecs reads, for every child of a rolling kind (RollingKinds) in the pipelines'
// namespaces, the part of its spec whose change rolls pods.
func podSpecs(ctx context.Context, t *testing.T, c client.Client, cases []*v1alpha1.AnalyticsPipeline) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	kinds := map[string]schema.GroupVersionKind{}
	for _, g := range upstream.GoldenCases(t) {
		for _, o := range g.Objects {
			if _, ok := RollingKinds[o.GetKind()]; ok {
				kinds[o.GetKind()] = o.GroupVersionKind()
			}
		}
	}
	for _, p := range cases {
		for kind, gvk := range kinds {
			list := &unstructured.UnstructuredList{}
			list.SetGroupVersionKind(gvk.GroupVersion().WithKind(kind + "List"))
			if err := c.List(ctx, list, client.InNamespace(p.Namespace)); err != nil {
				t.Fatal(err)
			}
			for i := range list.Items {
				out[kind+" "+p.Namespace+"/"+list.Items[i].GetName()] = PodSpec(&list.Items[i])
			}
		}
	}
	return out
}

// checkPodTemplates: every pod template change of the upgrade is one CHANGELOG.md lists, and
// every change it lists happened (a stale list would let the next one through unexplained).
func checkPodTemplates(t *testing.T, before, after map[string]map[string]any, allowed []string) {
	listed := map[string]bool{}
	for _, a := range allowed {
		listed[a] = true
	}
	seen := map[string][]string{}
	var children []string
	for child := range before {
		children = append(children, child)
	}
	sort.Strings(children)
	rolled := 0
	for _, child := range children {
		now, ok := after[child]
		if !ok {
			t.Errorf("%s: gone after the upgrade", child)
			continue
		}
		kind, _, _ := strings.Cut(child, " ")
		changes := Diff(map[string]any{"spec": before[child]}, map[string]any{"spec": now})
		if len(changes) > 0 {
			rolled++
		}
		for _, path := range changes {
			c := Change(kind, path)
			seen[c] = append(seen[c], child)
			if !listed[c] {
				t.Errorf("%s: `%s` changed on upgrade, and CHANGELOG.md does not list it: it rolls pods", child, c)
			}
		}
	}
	for child := range after {
		if _, ok := before[child]; !ok {
			t.Errorf("%s: made by the upgrade", child)
		}
	}
	for _, a := range allowed {
		if len(seen[a]) == 0 {
			t.Errorf("CHANGELOG.md lists `%s`, which no upgraded child changed", a)
		}
	}
	t.Logf("%d of %d children with pod templates changed; %d listed changes, each seen", rolled, len(children), len(allowed))
}

// checkStored: every pipeline and tier the previous release's CRDs stored is valid under the new
// ones. A dry-run create of a copy validates it whole (an update would not: the API server's
// validation ratcheting lets unchanged invalid fields through), and a dry-run update of the
// stored object itself is accepted.
func checkStored(ctx context.Context, t *testing.T, c client.Client, cases []*v1alpha1.AnalyticsPipeline, tiers []*v1alpha1.StorageTier) {
	var objs []client.Object
	for _, p := range cases {
		got := &v1alpha1.AnalyticsPipeline{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(p), got); err != nil {
			t.Fatal(err)
		}
		objs = append(objs, got)
	}
	for _, tier := range tiers {
		got := &v1alpha1.StorageTier{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(tier), got); err != nil {
			t.Fatal(err)
		}
		objs = append(objs, got)
	}
	for _, o := range objs {
		if err := c.Update(ctx, o.DeepCopyObject().(client.Object), client.DryRunAll); err != nil {
			t.Errorf("%s %s: the stored object's update is refused under the new CRD: %v", o.GetObjectKind().GroupVersionKind().Kind, o.GetName(), err)
		}
		cp := o.DeepCopyObject().(client.Object)
		cp.SetName(o.GetName() + "-copy")
		cp.SetResourceVersion("")
		cp.SetUID("")
		cp.SetManagedFields(nil)
		cp.SetFinalizers(nil)
		cp.SetOwnerReferences(nil)
		if err := c.Create(ctx, cp, client.DryRunAll); err != nil {
			t.Errorf("%s %s: a copy of the stored object is refused under the new CRD: %v", o.GetObjectKind().GroupVersionKind().Kind, o.GetName(), err)
		}
	}
	t.Logf("%d stored pipelines and tiers valid under the new CRDs", len(objs))
}

// childResources are the resources of every kind Strata writes (the golden cases', the claims it
// patches, the tiers' StorageClasses), by kind.
func childResources(t *testing.T, c client.Client) map[string]schema.GroupVersionResource {
	t.Helper()
	gvks := map[string]schema.GroupVersionKind{
		"PersistentVolumeClaim": corev1.SchemeGroupVersion.WithKind("PersistentVolumeClaim"),
		"StorageClass":          {Group: "storage.k8s.io", Version: "v1", Kind: "StorageClass"},
	}
	for _, g := range upstream.GoldenCases(t) {
		for _, o := range g.Objects {
			gvks[o.GetKind()] = o.GroupVersionKind()
		}
	}
	out := map[string]schema.GroupVersionResource{}
	for kind, gvk := range gvks {
		m, err := c.RESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		out[kind] = m.Resource
	}
	return out
}

// reportWrites logs every write of the upgrade per kind and field manager, and Strata's per
// kind, those that changed content (anything but metadata and status) apart from those that only
// took fields over; a child whose content Strata changed more than once is logged by name.
func reportWrites(t *testing.T, writes []Write) {
	t.Logf("writes during the upgrade, per kind and field manager (strata: the operator's applies; manager: its patches):\n  %s",
		strings.Join(ByKind(writes), "\n  "))
	perChild := map[string]int{}
	content, metadata := map[string]int{}, map[string]int{}
	for _, w := range writes {
		for _, m := range w.Managers {
			if !strataManagers[m] {
				continue
			}
			if w.Content {
				content[w.Kind]++
				perChild[w.Kind+" "+w.Namespace+"/"+w.Name]++
			} else {
				metadata[w.Kind]++
			}
			break
		}
	}
	t.Logf("Strata's writes per kind, content changed: %s; managedFields only: %s", counts(content), counts(metadata))
	for child, n := range perChild {
		if n > 1 {
			t.Logf("%s: content changed %d times by Strata", child, n)
		}
	}
}

func counts(m map[string]int) string {
	var out []string
	for k, n := range m {
		out = append(out, fmt.Sprintf("%s=%d", k, n))
	}
	sort.Strings(out)
	if len(out) == 0 {
		return "none"
	}
	return strings.Join(out, " ")
}
