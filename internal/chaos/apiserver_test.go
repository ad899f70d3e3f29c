package chaos

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/internal/desired"
	"github.com/strata-dev/strata/internal/testutil"
	"github.com/strata-dev/strata/internal/upstream"
)

// EnvAPIFaults is the number of API server restarts per step of TestAPIServerFaults; unset, the
// test is skipped (make chaos sets it): a graceful restart alone takes a minute, and make test's
// subset is internal/controlplane's TestRestartAPIServerExpiresWatches.
const EnvAPIFaults = "STRATA_CHAOS_API_FAULTS_PER_STEP"

// TestAPIServerFaults runs the lives of TestCrashAnywhere (life: create, scale up, scale down,
// delete under Delete; create, delete and create again under Retain) three times on one
// cluster: uninterrupted (namespace api-ref); with kube-apiserver restarted (SIGTERM: it drains,
// as in a rolling restart) at a random moment of every step's work (api-restart); and with etcd
// compacted to its current revision and kube-apiserver killed (SIGKILL) and started again
// (api-expired), so that every watch resumes from a resourceVersion that is gone and every
// informer, the manager's included, must list again (each such restart is checked to refuse a
// watch from before the compaction). Then another field manager changes a field Strata owns. After each step the manager must converge to the
// uninterrupted run's children, nothing leaked, nothing left after a deletion; the record of
// volumes, claims, cleanup pods and Kafka clusters must show no data destroyed (Replay). The
// manager keeps the chart's leader election: when a restart outlasts its renew deadline it exits
// and is started again without leader election, as a kubelet would start it (counted).
func TestAPIServerFaults(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts a control plane and the upstream controllers, and restarts the API server many times")
	}
	if os.Getenv(EnvAPIFaults) == "" {
		t.Skipf("%s unset (make chaos sets it): not checked here that the manager converges after API server restarts "+
			"and expired watches on the upstream harness; make test checks the restart and the relist themselves "+
			"(internal/controlplane, TestRestartAPIServerExpiresWatches)", EnvAPIFaults)
	}
	faults := envInt(t, EnvAPIFaults, 1)
	seed := envInt(t, EnvSeed, 1)
	ctx := context.Background()
	h, sample, rec := lifeHarness(ctx, t, "api-ref", "api-restart", "api-expired")

	reference := map[string]Snapshot{}
	t.Run("uninterrupted", func(t *testing.T) { life(ctx, t, h, sample, "api-ref", &APIFault{}, 0, reference) })
	// A started-again manager runs without leader election: it would first wait out the Lease
	// the exited one could not release (15 s), which is the standby's subject.
	args := []string{"--leader-elect=false"}
	restart := &APIFault{Cluster: h, Rand: rand.New(rand.NewPCG(uint64(seed), 1)), MaxUp: time.Second, Args: args}
	t.Run("restarted", func(t *testing.T) { life(ctx, t, h, sample, "api-restart", restart, faults, reference) })
	expired := &APIFault{Cluster: h, Rand: rand.New(rand.NewPCG(uint64(seed), 2)), MaxUp: time.Second, Args: args, Compact: true, Crash: true}
	t.Run("expired", func(t *testing.T) { life(ctx, t, h, sample, "api-expired", expired, faults, reference) })

	t.Run("another field manager", func(t *testing.T) { anotherManager(ctx, t, h, sample, reference) })

	events := rec.Events()
	for _, v := range Replay(events, nil) {
		t.Error(v)
	}
	for name, f := range map[string]*APIFault{"restarted": restart, "expired": expired} {
		t.Logf("%s: %d API server restarts (seed %d): stopping p50 %s max %s, starting p50 %s max %s; the manager exited %d times; convergence after the restart p50 %s, p99 %s",
			name, f.Faults(), seed, f.Stopped(50).Round(100*time.Millisecond), f.Stopped(100).Round(100*time.Millisecond),
			f.Started(50).Round(100*time.Millisecond), f.Started(100).Round(100*time.Millisecond), f.ManagerExits(),
			f.Convergence(50).Round(100*time.Millisecond), f.Convergence(99).Round(100*time.Millisecond))
	}
	t.Logf("%d events replayed", len(events))
	h.Alive(t)
}

// anotherManager: a human edits, with kubectl, the broker pool's replicas of the uninterrupted
// run's retained pipeline (a field Strata must own) after its last step. Strata must apply its
// value again, say so in ChildrenAsApplied (False, TakenBack, naming the pool, the field and
// the manager), and the children must be the uninterrupted run's again.
func anotherManager(ctx context.Context, t *testing.T, h *upstream.Cluster, sample *v1alpha1.AnalyticsPipeline, ref map[string]Snapshot) {
	p := sample.DeepCopy()
	p.Namespace, p.Name = "api-ref", "kept"
	pool := &unstructured.Unstructured{}
	pool.SetGroupVersionKind(desired.KafkaNodePoolGVK)
	pool.SetNamespace(p.Namespace)
	pool.SetName(desired.BrokerPoolName(p))
	if err := h.Client.Get(ctx, client.ObjectKeyFromObject(pool), pool); err != nil {
		t.Fatal(err)
	}
	replicas, _, _ := unstructured.NestedInt64(pool.Object, "spec", "replicas")
	edited := time.Now()
	patch := client.RawPatch(types.MergePatchType, []byte(fmt.Sprintf(`{"spec":{"replicas":%d}}`, replicas+3)))
	if err := h.Client.Patch(ctx, pool, patch, client.FieldOwner("kubectl-edit")); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, converge, "the replicas taken back and reported", func() error {
		if err := h.Client.Get(ctx, client.ObjectKeyFromObject(pool), pool); err != nil {
			return err
		}
		if r, _, _ := unstructured.NestedInt64(pool.Object, "spec", "replicas"); r != replicas {
			return fmt.Errorf("replicas %d, want Strata's %d", r, replicas)
		}
		got := &v1alpha1.AnalyticsPipeline{}
		if err := h.Client.Get(ctx, client.ObjectKeyFromObject(p), got); err != nil {
			return err
		}
		c := apimeta.FindStatusCondition(got.Status.Conditions, v1alpha1.ConditionChildrenAsApplied)
		want := "KafkaNodePool " + pool.GetName() + " .spec.replicas (by kubectl-edit)"
		if c == nil || c.Status != metav1.ConditionFalse || c.Reason != v1alpha1.ReasonTakenBack || !strings.Contains(c.Message, want) {
			return fmt.Errorf("ChildrenAsApplied %+v, want False TakenBack naming %q", c, want)
		}
		d, err := Differs(ctx, h.Client, p, ref["create again under Retain"])
		if err != nil || d != "" {
			return fmt.Errorf("children differ from the uninterrupted run's (%v): %s", err, d)
		}
		return nil
	})
	t.Logf("a field Strata must own, changed by another field manager: taken back and reported %s after the change",
		time.Since(edited).Round(100*time.Millisecond))
}
