package chaos

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/strata-dev/strata/internal/upstream"
)

// EnvAPIFaults is the number of API server restarts per step of TestAPIServerFaults (default 1).
const EnvAPIFaults = "STRATA_CHAOS_API_FAULTS_PER_STEP"

// TestAPIServerFaults runs the lives of TestCrashAnywhere (life: create, scale up, scale down,
// delete under Delete; create, delete and create again under Retain) three times on one
// cluster: uninterrupted (namespace api-ref); with kube-apiserver restarted at a random moment
// of every step's work (api-restart); and with etcd compacted to its current revision before
// each restart (api-expired), so that every watch resumes from a resourceVersion that is gone and
// every informer, the manager's included, must list again (each such restart is checked to
// refuse a watch from before the compaction). After each step the manager must converge to the
// uninterrupted run's children, nothing leaked, nothing left after a deletion; the record of
// volumes, claims, cleanup pods and Kafka clusters must show no data destroyed (Replay). The
// manager keeps the chart's leader election: when a restart outlasts its renew deadline it exits
// and is started again without leader election, as a kubelet would start it (counted).
func TestAPIServerFaults(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts a control plane and the upstream controllers, and restarts the API server many times")
	}
	faults := envInt(t, EnvAPIFaults, 1)
	seed := envInt(t, EnvSeed, 1)
	tiers, sample := upstream.Samples(t)
	h := upstream.Start(t, upstream.Options{Fixtures: tiers, JobNamespaces: []string{"api-ref", "api-restart", "api-expired"}, WithoutStrimzi: true})
	ctx := context.Background()
	rec := Record(t, h.Config)

	reference := map[string]Snapshot{}
	t.Run("uninterrupted", func(t *testing.T) { life(ctx, t, h, sample, "api-ref", &APIFault{}, 0, reference) })
	// A started-again manager runs without leader election: it would first wait out the Lease
	// the exited one could not release (15 s), which is the standby's subject.
	args := []string{"--leader-elect=false"}
	restart := &APIFault{Cluster: h, Rand: rand.New(rand.NewPCG(uint64(seed), 1)), MaxUp: time.Second, Args: args}
	t.Run("restarted", func(t *testing.T) { life(ctx, t, h, sample, "api-restart", restart, faults, reference) })
	expired := &APIFault{Cluster: h, Rand: rand.New(rand.NewPCG(uint64(seed), 2)), MaxUp: time.Second, Args: args, Compact: true}
	t.Run("expired", func(t *testing.T) { life(ctx, t, h, sample, "api-expired", expired, faults, reference) })

	events := rec.Events()
	for _, v := range Replay(events, nil) {
		t.Error(v)
	}
	for name, f := range map[string]*APIFault{"restarted": restart, "expired": expired} {
		t.Logf("%s: %d API server restarts (seed %d), away p50 %s max %s; the manager exited %d times; convergence after the restart p50 %s, p99 %s",
			name, f.Faults(), seed, f.Down(50).Round(100*time.Millisecond), f.Down(100).Round(100*time.Millisecond), f.ManagerExits(),
			f.Convergence(50).Round(100*time.Millisecond), f.Convergence(99).Round(100*time.Millisecond))
	}
	t.Logf("%d events replayed", len(events))
	h.Alive(t)
}
