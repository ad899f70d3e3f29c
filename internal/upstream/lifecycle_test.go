package upstream

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/internal/desired"
	"github.com/strata-dev/strata/internal/testutil"
)

// TestLifecycleOnRealControllers takes two copies of the sample through their life on the real
// controllers: scaled up (more Elasticsearch data nodes, which ECK adds and the scheduler binds
// to Strata's local volumes; more executors, for which the Spark operator submits the job again),
// deleted under volumeReclaimPolicy Delete (everything goes, and the local volumes come back
// Available only through Strata's wipe), and deleted under Retain and created again (the data
// claims stay bound, and the new cluster's pods get the same volumes back).
func TestLifecycleOnRealControllers(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the upstream harness starts a control plane and six controllers")
	}
	tiers, sample := Samples(t)
	// Without Strimzi, even where its build is present: its brokers, Pending for want of disks
	// while the ES data pods hold them, take the volumes a deletion frees before the check can
	// see them Available (Strimzi's own scenarios are TestStrimziRunsTheSample's).
	h := Start(t, Options{Fixtures: tiers, JobNamespaces: []string{"drop", "keep"}, WithoutStrimzi: true})
	ctx := context.Background()
	pipeline := func(ns string, policy string) *v1alpha1.AnalyticsPipeline {
		p := &v1alpha1.AnalyticsPipeline{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: sample.Name}, Spec: *sample.Spec.DeepCopy()}
		p.Spec.VolumeReclaimPolicy = policy
		if err := h.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			t.Fatal(err)
		}
		if err := h.Client.Create(ctx, p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	drop := pipeline("drop", "Delete")
	keep := pipeline("keep", "Retain")
	for _, p := range []*v1alpha1.AnalyticsPipeline{drop, keep} {
		checkElasticsearch(ctx, t, h, p.Namespace, desired.ElasticsearchName(p))
		checkDriver(ctx, t, h, p.Namespace, desired.SparkApplicationName(p))
	}

	t.Run("scale up", func(t *testing.T) {
		before := driverUID(ctx, t, h, drop)
		got := &v1alpha1.AnalyticsPipeline{}
		if err := h.Client.Get(ctx, client.ObjectKeyFromObject(drop), got); err != nil {
			t.Fatal(err)
		}
		dataBefore, execBefore := got.Status.Plan.ElasticsearchDataNodes, got.Status.Plan.Executors
		patch := client.RawPatch(types.MergePatchType, []byte(`{"spec":{"workload":{"messagesPerSecond":14000}}}`))
		if err := h.Client.Patch(ctx, got, patch); err != nil {
			t.Fatal(err)
		}
		testutil.Eventually(t, upstreamWait, "the pipeline planned for 14000 msgs/s", func() error {
			if err := h.Client.Get(ctx, client.ObjectKeyFromObject(drop), got); err != nil {
				return err
			}
			if got.Status.ObservedGeneration != got.Generation {
				return fmt.Errorf("generation %d observed %d", got.Generation, got.Status.ObservedGeneration)
			}
			return nil
		})
		if got.Status.Plan.ElasticsearchDataNodes <= dataBefore || got.Status.Plan.Executors <= execBefore {
			t.Fatalf("plan: %d data nodes (was %d), %d executors (was %d): the scale-up asks for more of neither",
				got.Status.Plan.ElasticsearchDataNodes, dataBefore, got.Status.Plan.Executors, execBefore)
		}
		t.Logf("data nodes %d → %d, executors %d → %d", dataBefore, got.Status.Plan.ElasticsearchDataNodes, execBefore, got.Status.Plan.Executors)
		checkElasticsearch(ctx, t, h, drop.Namespace, desired.ElasticsearchName(drop))
		testutil.Eventually(t, upstreamWait, "ECK's data StatefulSet at the new count", func() error {
			var set appsv1.StatefulSet
			key := client.ObjectKey{Namespace: drop.Namespace, Name: desired.ElasticsearchStatefulSetName(drop, "data")}
			if err := h.Client.Get(ctx, key, &set); err != nil {
				return err
			}
			if set.Status.ReadyReplicas != got.Status.Plan.ElasticsearchDataNodes {
				return fmt.Errorf("%d ready of %d", set.Status.ReadyReplicas, got.Status.Plan.ElasticsearchDataNodes)
			}
			return nil
		})
		// The job's micro-batch follows the workload (maxOffsetsPerTrigger): a new sparkConf, which
		// the Spark operator submits again.
		testutil.Eventually(t, upstreamWait, "the Spark operator's new submission", func() error {
			if uid := driverUID(ctx, t, h, drop); uid == "" || uid == before {
				return fmt.Errorf("driver %q, before %q", uid, before)
			}
			return nil
		})
		checkDriver(ctx, t, h, drop.Namespace, desired.SparkApplicationName(drop))
		// Submitted again anyway, the job starts with the executors it is to run.
		if n, _, _ := unstructured.NestedInt64(sparkApplication(ctx, t, h, drop).Object, "spec", "executor", "instances"); n != int64(got.Status.Plan.Executors) {
			t.Errorf("the SparkApplication submitted again has %d executors, the plan %d", n, got.Status.Plan.Executors)
		}
	})

	t.Run("executors changed in place", func(t *testing.T) {
		// More executors and nothing else (the floor raised, as the autoscaler raises the
		// count): the target changes, the SparkApplication does not, so the Spark operator has
		// nothing to submit again (EventFilter.Update compares the spec; its generation proves
		// the spec unchanged once the operator has planned the change).
		before := driverUID(ctx, t, h, drop)
		app := sparkApplication(ctx, t, h, drop)
		got := &v1alpha1.AnalyticsPipeline{}
		if err := h.Client.Get(ctx, client.ObjectKeyFromObject(drop), got); err != nil {
			t.Fatal(err)
		}
		want := got.Status.Plan.Executors + 2
		patch := client.RawPatch(types.MergePatchType, []byte(fmt.Sprintf(`{"spec":{"spark":{"executors":{"min":%d}}}}`, want)))
		if err := h.Client.Patch(ctx, got, patch); err != nil {
			t.Fatal(err)
		}
		testutil.Eventually(t, upstreamWait, fmt.Sprintf("the pipeline planned with %d executors and its target written", want), func() error {
			if err := h.Client.Get(ctx, client.ObjectKeyFromObject(drop), got); err != nil {
				return err
			}
			if got.Status.ObservedGeneration != got.Generation || got.Status.Plan.Executors != want {
				return fmt.Errorf("generation %d observed %d, %d executors planned", got.Generation, got.Status.ObservedGeneration, got.Status.Plan.Executors)
			}
			var cm corev1.ConfigMap
			if err := h.Client.Get(ctx, client.ObjectKey{Namespace: drop.Namespace, Name: desired.ExecutorsConfigMapName(drop)}, &cm); err != nil {
				return err
			}
			if cm.Data[desired.ExecutorsKey] != fmt.Sprint(want) {
				return fmt.Errorf("target %q", cm.Data[desired.ExecutorsKey])
			}
			return nil
		})
		after := sparkApplication(ctx, t, h, drop)
		if after.GetGeneration() != app.GetGeneration() {
			t.Errorf("the SparkApplication went from generation %d to %d: its spec changed, which the Spark operator resubmits",
				app.GetGeneration(), after.GetGeneration())
		}
		if uid := driverUID(ctx, t, h, drop); uid != before {
			t.Errorf("driver %q, before %q: the job was submitted again", uid, before)
		}
	})

	t.Run("delete under Delete", func(t *testing.T) {
		volumes := boundVolumes(ctx, t, h, drop.Namespace)
		if err := h.Client.Delete(ctx, drop); err != nil {
			t.Fatal(err)
		}
		testutil.Eventually(t, upstreamWait, "everything of the pipeline gone, its local volumes Available", func() error {
			if err := gone(ctx, h, drop); err != nil {
				return err
			}
			for _, list := range []client.ObjectList{&corev1.PodList{}, &corev1.PersistentVolumeClaimList{}, &appsv1.StatefulSetList{}} {
				if err := h.Client.List(ctx, list, client.InNamespace(drop.Namespace)); err != nil {
					return err
				}
				if n := len(listItems(list)); n > 0 {
					return fmt.Errorf("%d %T left: %v", n, list, listItems(list))
				}
			}
			return volumesAvailable(ctx, h, volumes)
		})
	})

	t.Run("delete under Retain and create again", func(t *testing.T) {
		volumes := boundVolumes(ctx, t, h, keep.Namespace)
		if err := h.Client.Delete(ctx, keep); err != nil {
			t.Fatal(err)
		}
		testutil.Eventually(t, upstreamWait, "the pipeline and its Elasticsearch gone, the data claims kept", func() error {
			if err := gone(ctx, h, keep); err != nil {
				return err
			}
			var sets appsv1.StatefulSetList
			if err := h.Client.List(ctx, &sets, client.InNamespace(keep.Namespace)); err != nil {
				return err
			}
			if len(sets.Items) > 0 {
				return fmt.Errorf("%d StatefulSets left", len(sets.Items))
			}
			kept := boundVolumes(ctx, t, h, keep.Namespace)
			for claim, pv := range volumes {
				if dataClaim(claim) && kept[claim] != pv {
					return fmt.Errorf("claim %s: bound to %q, was %q", claim, kept[claim], pv)
				}
			}
			return nil
		})
		again := &v1alpha1.AnalyticsPipeline{ObjectMeta: metav1.ObjectMeta{Namespace: keep.Namespace, Name: keep.Name}, Spec: *keep.Spec.DeepCopy()}
		if err := h.Client.Create(ctx, again); err != nil {
			t.Fatal(err)
		}
		checkElasticsearch(ctx, t, h, again.Namespace, desired.ElasticsearchName(again))
		now := boundVolumes(ctx, t, h, keep.Namespace)
		for claim, pv := range volumes {
			if dataClaim(claim) && now[claim] != pv {
				t.Errorf("claim %s: bound to %q after the re-creation, was %q", claim, now[claim], pv)
			}
		}
	})
	h.Alive(t)
}

// gone is nil once p is deleted (its finalizer done).
func gone(ctx context.Context, h *Cluster, p *v1alpha1.AnalyticsPipeline) error {
	if err := h.Client.Get(ctx, client.ObjectKeyFromObject(p), &v1alpha1.AnalyticsPipeline{}); !apierrors.IsNotFound(err) {
		return fmt.Errorf("pipeline %s/%s is still there (%v)", p.Namespace, p.Name, err)
	}
	return nil
}

// driverUID is the UID of p's driver pod, empty when there is none.
func driverUID(ctx context.Context, t *testing.T, h *Cluster, p *v1alpha1.AnalyticsPipeline) string {
	var pod corev1.Pod
	err := h.Client.Get(ctx, client.ObjectKey{Namespace: p.Namespace, Name: desired.SparkApplicationName(p) + "-driver"}, &pod)
	if apierrors.IsNotFound(err) {
		return ""
	} else if err != nil {
		t.Fatal(err)
	}
	return string(pod.UID)
}

// sparkApplication reads p's SparkApplication.
func sparkApplication(ctx context.Context, t *testing.T, h *Cluster, p *v1alpha1.AnalyticsPipeline) *unstructured.Unstructured {
	app := &unstructured.Unstructured{}
	app.SetGroupVersionKind(desired.SparkApplicationGVK)
	if err := h.Client.Get(ctx, client.ObjectKey{Namespace: p.Namespace, Name: desired.SparkApplicationName(p)}, app); err != nil {
		t.Fatal(err)
	}
	return app
}

// boundVolumes maps each bound claim in ns to its volume.
func boundVolumes(ctx context.Context, t *testing.T, h *Cluster, ns string) map[string]string {
	var claims corev1.PersistentVolumeClaimList
	if err := h.Client.List(ctx, &claims, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, c := range claims.Items {
		if c.Status.Phase == corev1.ClaimBound {
			out[c.Name] = c.Spec.VolumeName
		}
	}
	return out
}

// volumesAvailable is nil once every one of Strata's local volumes among volumes is Available
// again (the harness's provisioned ones are deleted instead).
func volumesAvailable(ctx context.Context, h *Cluster, volumes map[string]string) error {
	var waiting []string
	for _, name := range volumes {
		var pv corev1.PersistentVolume
		if err := h.Client.Get(ctx, client.ObjectKey{Name: name}, &pv); apierrors.IsNotFound(err) {
			continue
		} else if err != nil {
			return err
		}
		if pv.Spec.Local != nil && (pv.Status.Phase != corev1.VolumeAvailable || pv.Spec.ClaimRef != nil) {
			waiting = append(waiting, fmt.Sprintf("%s %s", pv.Name, pv.Status.Phase))
		}
	}
	sort.Strings(waiting)
	if len(waiting) > 0 {
		return fmt.Errorf("local volumes not Available yet: %v", waiting)
	}
	return nil
}

func listItems(list client.ObjectList) []string {
	var out []string
	switch l := list.(type) {
	case *corev1.PodList:
		for _, o := range l.Items {
			out = append(out, o.Name)
		}
	case *corev1.PersistentVolumeClaimList:
		for _, o := range l.Items {
			out = append(out, o.Name)
		}
	case *appsv1.StatefulSetList:
		for _, o := range l.Items {
			out = append(out, o.Name)
		}
	}
	return out
}

// dataClaim says whether a claim is an Elasticsearch data node's (ECK names them
// <volumeClaimTemplate>-<StatefulSet>-<ordinal>).
func dataClaim(name string) bool {
	return strings.HasPrefix(name, desired.ElasticsearchDataVolume+"-") && strings.Contains(name, "-es-data-")
}
