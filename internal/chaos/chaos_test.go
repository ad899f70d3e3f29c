package chaos

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/controllers/pipeline"
	"github.com/strata-dev/strata/internal/desired"
	"github.com/strata-dev/strata/internal/testutil"
	"github.com/strata-dev/strata/internal/upstream"
)

// Environment of `make chaos`: kills per round (default 2, a short run for `make test`) and the
// seed of the kill moments (default 1).
const (
	EnvKills = "STRATA_CHAOS_KILLS_PER_ROUND"
	EnvSeed  = "STRATA_CHAOS_SEED"
)

// converge is how long a manager started after the last kill may take to converge: generous,
// the upstream controllers run beside it on a loaded two-core machine.
const converge = 5 * time.Minute

// clusterID is the KRaft cluster ID the test gives the retained pipeline's Kafka, as Strimzi
// would on its first reconcile (no Strimzi runs in CI).
const clusterID = "chaos-cluster-id-0000"

// lifeHarness starts the upstream harness the lives (life) run on in namespaces, and the record
// of what they change: the samples, their local tiers taking a lost node's claims again (the
// life's node loss), and no Strimzi, even where its build is present: the test plays its part
// (a cluster ID, the brokers' claims, the node pools' status.nodeIds every broker step waits on)
// the same in every run; a real one would write its own status in its own time, and in CI none
// runs. Every test of lives starts here, so that none misses a part the life's steps need
// (TestAPIServerFaults had neither the pools' play nor the node-loss policy once the life took
// them on, and timed out on the first step).
func lifeHarness(ctx context.Context, t *testing.T, namespaces ...string) (*upstream.Cluster, *v1alpha1.AnalyticsPipeline, *Recorder) {
	t.Helper()
	tiers, sample := upstream.Samples(t)
	withNodeLoss(tiers)
	h := upstream.Start(t, upstream.Options{Nodes: lifeNodes(len(namespaces)), Fixtures: tiers, JobNamespaces: namespaces, WithoutStrimzi: true})
	rec := Record(t, h.Config)
	playPools(ctx, t, h, namespaces...)
	return h, sample, rec
}

// lifeNodes are the harness's nodes for lives lives: upstream.DefaultNodes' twelve with the
// sample tier's disk, and four more for each life past two. Every life ends keeping a retained
// pipeline's four data volumes (create again under Retain) and its node loss needs a free volume
// on a live node for the claim made again: on twelve disks the third life of TestAPIServerFaults
// found none (8 held by the earlier lives' retained pipelines, 3 by its own data nodes, 1 lost),
// and its new claim stayed Pending until the lost node came back.
func lifeNodes(lives int) []upstream.Node {
	nodes := upstream.DefaultNodes()
	zones := []string{"zone-a", "zone-b", "zone-c"}
	for i := 12; i < 12+4*max(lives-2, 0); i++ {
		nodes = append(nodes, upstream.Node{Name: fmt.Sprintf("nvme-%d", i), Zone: zones[i%3],
			Labels: map[string]string{upstream.NVMeLabel: "true"}, CPU: "16", Memory: "64Gi"})
	}
	return nodes
}

// TestCrashAnywhere runs a pipeline's life — create, scale up, scale down, the loss of a node
// with one of its volumes, delete under Delete —
// and a retained pipeline's — create, delete under Retain, create again — twice on one cluster:
// once uninterrupted (namespace chaos-ref), then (namespace chaos-run) killing the manager with
// SIGKILL at random moments of every step. After each step of the second run, the last manager
// must converge to the children the uninterrupted run had after the same step, with nothing
// leaked and, after deletions, nothing left; and the record of every change to volumes, claims,
// cleanup pods and Kafka clusters must show no data destroyed (Replay).
func TestCrashAnywhere(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts a control plane, the upstream controllers and the manager many times")
	}
	kills := envInt(t, EnvKills, 2)
	seed := envInt(t, EnvSeed, 1)
	ctx := context.Background()
	h, sample, rec := lifeHarness(ctx, t, "chaos-ref", "chaos-run")
	// Leader election is the standby's subject: a restarted single manager would wait out the
	// killed one's lease (15 s) before each reconcile, which proves nothing about crash safety.
	m := &Monkey{Operator: h.Operator, Rand: rand.New(rand.NewPCG(uint64(seed), 0)), MaxUp: time.Second,
		Args: []string{"--leader-elect=false"}}

	reference := map[string]Snapshot{}
	t.Run("uninterrupted", func(t *testing.T) { life(ctx, t, h, sample, "chaos-ref", m, 0, reference) })
	t.Run("killed", func(t *testing.T) { life(ctx, t, h, sample, "chaos-run", m, kills, reference) })

	events := rec.Events()
	for _, v := range Replay(events, nil) {
		t.Error(v)
	}
	wipes := 0
	for _, e := range events {
		if e.Kind == KindCleanupPod && e.Phase == "Succeeded" {
			wipes++
		}
	}
	t.Logf("%d kills (seed %d), %d events replayed, %d cleanup pod successes seen; convergence after the last restart p50 %s, p99 %s",
		m.Kills(), seed, len(events), wipes, m.Percentile(50).Round(100*time.Millisecond), m.Percentile(99).Round(100*time.Millisecond))
	h.Alive(t)
}

// storm is what befalls a step: the manager killed (Monkey), the API server restarted (APIFault).
type storm interface {
	Storm(t testing.TB, n int, change func(i int))
	Converged(restarted time.Time) time.Duration
}

// life runs both pipelines' lives in namespace ns, striking (m) kills times in each step.
// With kills 0 it records each step's children in ref; else it waits for each step's children
// to be ref's.
func life(ctx context.Context, t *testing.T, h *upstream.Cluster, sample *v1alpha1.AnalyticsPipeline, ns string, m storm, kills int, ref map[string]Snapshot) {
	if err := h.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); client.IgnoreAlreadyExists(err) != nil {
		t.Fatal(err)
	}
	step := func(name string, p *v1alpha1.AnalyticsPipeline, act func(), between func(i int), done func() error) {
		t.Run(name, func(t *testing.T) {
			act()
			m.Storm(t, kills, between)
			if between != nil && kills > 0 {
				act() // the step's own change last: what the run must converge to
			}
			restarted := time.Now()
			testutil.Eventually(t, converge, name+": converged after the last restart", func() error {
				if err := done(); err != nil || p == nil {
					return err
				}
				return same(ctx, h, p, name, kills == 0, ref)
			})
			if kills > 0 {
				t.Logf("%s: converged %s after the last of %d faults", name, m.Converged(restarted).Round(100*time.Millisecond), kills)
			}
		})
	}

	// A pipeline under Delete through its life.
	p := sample.DeepCopy()
	p.Namespace = ns
	p.Spec.VolumeReclaimPolicy = "Delete"
	// Between the kills of a scale step the load moves between the step's value and one within
	// the life's range (never above its 14,000: the topic keeps the most partitions it had), so
	// every kill lands in the middle of the work a change causes.
	wobble := func(a, b int64) func(i int) {
		return func(i int) { setLoad(ctx, t, h, p, []int64{a, b}[i%2]) }
	}
	// Brokers: 3 at the sample's 10,000 msgs/s, 4 at 14,000, 2 (the spec's minimum) at 2,000,
	// reached in two steps, each once playPools reported the previous broker gone.
	step("create", p, func() { create(ctx, t, h, p) }, nil, func() error { return settled(ctx, h, p) })
	step("scale up", p, func() { setLoad(ctx, t, h, p, 14000) }, wobble(12000, 14000), func() error { return settled(ctx, h, p) })
	step("scale down", p, func() { setLoad(ctx, t, h, p, 2000) }, wobble(12000, 2000), func() error { return settled(ctx, h, p) })
	// A node lost with the volume of one of its Elasticsearch claims; it comes back (empty) after.
	var lost lostNode
	step("node loss", p, func() { lost = loseNode(ctx, t, h, p) }, nil, func() error { return replaced(ctx, h, p, lost) })
	nodeBack(ctx, t, h, lost)
	step("delete under Delete", nil, func() { remove(ctx, t, h, p) }, nil, func() error { return deleted(ctx, h, p) })

	// A retained pipeline: its Kafka's claims (Strimzi's to make; the test makes them) must keep
	// the cluster's ID across deletion and re-creation.
	kept := sample.DeepCopy()
	kept.Namespace, kept.Name = ns, "kept"
	kept.Spec.Kafka.Topic.Name = "kept"
	kept.Spec.VolumeReclaimPolicy = "Retain"
	step("create under Retain", kept, func() { create(ctx, t, h, kept) }, nil, func() error { return observed(ctx, h, kept) })
	playStrimzi(ctx, t, h, kept)
	step("delete under Retain", nil, func() { remove(ctx, t, h, kept) }, nil, func() error { return retained(ctx, h, kept) })
	step("create again under Retain", kept, func() { create(ctx, t, h, kept) }, nil, func() error { return recovered(ctx, h, kept) })
}

// same records (record) or compares the pipeline's children with the reference of the step.
func same(ctx context.Context, h *upstream.Cluster, p *v1alpha1.AnalyticsPipeline, step string, record bool, ref map[string]Snapshot) error {
	if record {
		got, err := Take(ctx, h.Client, p)
		ref[step] = got
		return err
	}
	d, err := Differs(ctx, h.Client, p, ref[step])
	if err != nil {
		return err
	}
	if d != "" {
		return fmt.Errorf("children differ from the uninterrupted run's:\n  %s", d)
	}
	return nil
}

// settled is nil once the pipeline observed its generation and its broker pool runs the plan's
// brokers: every broker step taken, and reported by (the test's play of) Strimzi.
func settled(ctx context.Context, h *upstream.Cluster, p *v1alpha1.AnalyticsPipeline) error {
	if err := observed(ctx, h, p); err != nil {
		return err
	}
	got := &v1alpha1.AnalyticsPipeline{}
	if err := h.Client.Get(ctx, client.ObjectKeyFromObject(p), got); err != nil {
		return err
	}
	pool := &unstructured.Unstructured{}
	pool.SetGroupVersionKind(desired.KafkaNodePoolGVK)
	if err := h.Client.Get(ctx, client.ObjectKey{Namespace: p.Namespace, Name: desired.BrokerPoolName(p)}, pool); err != nil {
		return err
	}
	replicas, _, _ := unstructured.NestedInt64(pool.Object, "spec", "replicas")
	ids, _, _ := unstructured.NestedSlice(pool.Object, "status", "nodeIds")
	if got.Status.Plan == nil {
		return fmt.Errorf("no plan in status")
	}
	if want := int64(got.Status.Plan.Brokers); replicas != want || int64(len(ids)) != want {
		return fmt.Errorf("broker pool at %d replicas, %d nodes; the plan wants %d", replicas, len(ids), want)
	}
	// A scale-down's intermediate step is not where the step settles: the pool and the plan
	// agree on it for the moment between Strimzi reporting the broker gone and the reconcile
	// that takes the next step. Taken as settled, the run without kills snapshots 3 brokers
	// where the killed one, whose restarts reconcile at once, has 2. Nor is a hold: a reconcile
	// that ran while the test's Strimzi had not yet taken the previous broker away keeps the
	// pool (ScaleDownInProgress), and the pool then agrees with that plan until the next
	// reconcile: settled there, the run without kills recorded the 3 brokers' retention.bytes.
	// The plan says both with targetBrokers, the count it heads for.
	if target := got.Status.Plan.TargetBrokers; target != 0 {
		c := apimeta.FindStatusCondition(got.Status.Conditions, v1alpha1.ConditionPlanValid)
		msg := ""
		if c != nil {
			msg = c.Message
		}
		return fmt.Errorf("a broker step is under way, %d brokers towards %d: %s", got.Status.Plan.Brokers, target, msg)
	}
	return nil
}

// observed is nil once the pipeline's status observed its generation: a reconcile of this spec
// ran to its end (the status is written last), every child applied.
func observed(ctx context.Context, h *upstream.Cluster, p *v1alpha1.AnalyticsPipeline) error {
	got := &v1alpha1.AnalyticsPipeline{}
	if err := h.Client.Get(ctx, client.ObjectKeyFromObject(p), got); err != nil {
		return err
	}
	if got.Status.ObservedGeneration != got.Generation {
		return fmt.Errorf("generation %d, observed %d", got.Generation, got.Status.ObservedGeneration)
	}
	// No one but Strata and the upstream controllers writes the children here: a field Strata
	// must own reported changed by another manager is a false alarm (docs/ownership.md).
	if c := apimeta.FindStatusCondition(got.Status.Conditions, v1alpha1.ConditionChildrenAsApplied); c != nil && c.Status != metav1.ConditionTrue {
		return fmt.Errorf("%s=%s %s: %s", c.Type, c.Status, c.Reason, c.Message)
	}
	return nil
}

func envInt(t *testing.T, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		t.Fatalf("%s=%q: want a count", name, v)
	}
	return n
}

func create(ctx context.Context, t *testing.T, h *upstream.Cluster, p *v1alpha1.AnalyticsPipeline) {
	t.Helper()
	obj := &v1alpha1.AnalyticsPipeline{ObjectMeta: metav1.ObjectMeta{Namespace: p.Namespace, Name: p.Name}, Spec: *p.Spec.DeepCopy()}
	if err := h.Client.Create(ctx, obj); err != nil {
		t.Fatal(err)
	}
}

func remove(ctx context.Context, t *testing.T, h *upstream.Cluster, p *v1alpha1.AnalyticsPipeline) {
	t.Helper()
	if err := h.Client.Delete(ctx, &v1alpha1.AnalyticsPipeline{ObjectMeta: metav1.ObjectMeta{Namespace: p.Namespace, Name: p.Name}}); err != nil {
		t.Fatal(err)
	}
}

func setLoad(ctx context.Context, t *testing.T, h *upstream.Cluster, p *v1alpha1.AnalyticsPipeline, perSecond int64) {
	t.Helper()
	p.Spec.Workload.MessagesPerSecond = perSecond
	patch := client.RawPatch(types.MergePatchType, []byte(fmt.Sprintf(`{"spec":{"workload":{"messagesPerSecond":%d}}}`, perSecond)))
	if err := h.Client.Patch(ctx, &v1alpha1.AnalyticsPipeline{ObjectMeta: metav1.ObjectMeta{Namespace: p.Namespace, Name: p.Name}}, patch); err != nil {
		t.Fatal(err)
	}
}

// deleted is nil once the pipeline and its children are gone, every volume its claims held is
// free again and no cleanup pod is left.
func deleted(ctx context.Context, h *upstream.Cluster, p *v1alpha1.AnalyticsPipeline) error {
	return freed(ctx, h, p, false)
}

// freed is nil once the pipeline and its children are gone, no volume (only local ones: onlyLocal)
// is held for a claim of its namespace and no cleanup pod is left.
func freed(ctx context.Context, h *upstream.Cluster, p *v1alpha1.AnalyticsPipeline, onlyLocal bool) error {
	err := h.Client.Get(ctx, client.ObjectKeyFromObject(p), &v1alpha1.AnalyticsPipeline{})
	if !apierrors.IsNotFound(err) {
		return fmt.Errorf("the pipeline still exists (%v)", err)
	}
	left, err := children(ctx, h.Client, p, true)
	if err != nil {
		return err
	}
	for k := range left {
		return fmt.Errorf("%s still exists (%d children left)", k, len(left))
	}
	var pvs corev1.PersistentVolumeList
	if err := h.Client.List(ctx, &pvs); err != nil {
		return err
	}
	for _, pv := range pvs.Items {
		if (pv.Spec.Local != nil || !onlyLocal) && pv.Spec.ClaimRef != nil && pv.Spec.ClaimRef.Namespace == p.Namespace {
			return fmt.Errorf("volume %s still %s for claim %s", pv.Name, pv.Status.Phase, pv.Spec.ClaimRef.Name)
		}
	}
	var pods corev1.PodList
	if err := h.Client.List(ctx, &pods, client.MatchingLabels{desired.LabelComponent: desired.ComponentVolumeCleanup}); err != nil {
		return err
	}
	if len(pods.Items) > 0 {
		return fmt.Errorf("%d cleanup pods left, %s the first", len(pods.Items), pods.Items[0].Name)
	}
	return nil
}

// playStrimzi does what Strimzi would for the retained pipeline's Kafka: gives it a cluster ID
// and makes its brokers' claims (deleteClaim false: they outlive the Kafka).
func playStrimzi(ctx context.Context, t *testing.T, h *upstream.Cluster, p *v1alpha1.AnalyticsPipeline) {
	t.Helper()
	k := &unstructured.Unstructured{}
	k.SetGroupVersionKind(desired.KafkaGVK)
	if err := h.Client.Get(ctx, client.ObjectKey{Namespace: p.Namespace, Name: desired.KafkaName(p)}, k); err != nil {
		t.Fatal(err)
	}
	if err := unstructured.SetNestedField(k.Object, clusterID, "status", "clusterId"); err != nil {
		t.Fatal(err)
	}
	if err := h.Client.Status().Update(ctx, k); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		pvc := &corev1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Namespace: p.Namespace, Name: fmt.Sprintf("data-0-%s-%d", desired.BrokerPoolName(p), i),
				Labels: map[string]string{desired.StrimziClusterLabel: desired.KafkaName(p)}},
			Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				StorageClassName: ptr.To("standard"),
				Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}},
		}
		if err := h.Client.Create(ctx, pvc); err != nil {
			t.Fatal(err)
		}
	}
	testutil.Eventually(t, converge, "the cluster ID in the pipeline's status", func() error {
		got := &v1alpha1.AnalyticsPipeline{}
		if err := h.Client.Get(ctx, client.ObjectKeyFromObject(p), got); err != nil {
			return err
		}
		if got.Status.KafkaClusterID != clusterID {
			return fmt.Errorf("status.kafkaClusterID %q", got.Status.KafkaClusterID)
		}
		return nil
	})
}

// retained is nil once the retained pipeline is gone with its Kafka, and its Kafka's claims are
// kept carrying the cluster ID.
func retained(ctx context.Context, h *upstream.Cluster, p *v1alpha1.AnalyticsPipeline) error {
	if err := h.Client.Get(ctx, client.ObjectKeyFromObject(p), &v1alpha1.AnalyticsPipeline{}); !apierrors.IsNotFound(err) {
		return fmt.Errorf("the pipeline still exists (%v)", err)
	}
	k := &unstructured.Unstructured{}
	k.SetGroupVersionKind(desired.KafkaGVK)
	if err := h.Client.Get(ctx, client.ObjectKey{Namespace: p.Namespace, Name: desired.KafkaName(p)}, k); !apierrors.IsNotFound(err) {
		return fmt.Errorf("the Kafka still exists (%v)", err)
	}
	var claims corev1.PersistentVolumeClaimList
	if err := h.Client.List(ctx, &claims, client.InNamespace(p.Namespace), client.MatchingLabels{desired.StrimziClusterLabel: desired.KafkaName(p)}); err != nil {
		return err
	}
	if len(claims.Items) != 2 {
		return fmt.Errorf("%d Kafka claims kept, want 2", len(claims.Items))
	}
	for _, c := range claims.Items {
		if got := c.Annotations[pipeline.AnnotationKafkaClusterID]; got != clusterID {
			return fmt.Errorf("claim %s records cluster ID %q", c.Name, got)
		}
	}
	return nil
}

// recovered is nil once the re-created pipeline runs its Kafka unpaused under the retained ID.
func recovered(ctx context.Context, h *upstream.Cluster, p *v1alpha1.AnalyticsPipeline) error {
	k := &unstructured.Unstructured{}
	k.SetGroupVersionKind(desired.KafkaGVK)
	if err := h.Client.Get(ctx, client.ObjectKey{Namespace: p.Namespace, Name: desired.KafkaName(p)}, k); err != nil {
		return err
	}
	if id, _, _ := unstructured.NestedString(k.Object, "status", "clusterId"); id != clusterID {
		return fmt.Errorf("the Kafka's status.clusterId is %q", id)
	}
	if k.GetAnnotations()["strimzi.io/pause-reconciliation"] == "true" {
		return fmt.Errorf("the Kafka is still paused")
	}
	return observed(ctx, h, p)
}
