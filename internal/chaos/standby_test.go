package chaos

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/internal/lab"
	"github.com/strata-dev/strata/internal/testutil"
	"github.com/strata-dev/strata/internal/upstream"
)

// Environment of `make standby`: leaders killed (default 1, `make test`'s), leaders paused past
// their lease (default 0: the fence's own test covers it in `make test`), and lease timings replacing the chart's ("15s/10s/2s": lease
// duration, renew deadline, retry period).
const (
	EnvStandbyKills  = "STRATA_STANDBY_KILLS"
	EnvStandbyPauses = "STRATA_STANDBY_PAUSES"
	EnvStandbyLease  = "STRATA_STANDBY_LEASE"
)

// standbyNamespace is where the pipeline lives.
const standbyNamespace = "standby"

// TestStandbyTakesOver runs two manager replicas with leader election, as the chart does with
// replicaCount 2, each reaching the API server through a proxy of its own that records its
// writes (Proxy). It takes a pipeline under Delete through its life — delete, create, scale up,
// scale down, again — and in each step kills the leader with SIGKILL at a random moment of the
// work, then (STRATA_STANDBY_PAUSES times) freezes the leader with SIGSTOP past its lease and
// lets it go on once the standby has taken over. A new replica replaces each lost one, as the
// Deployment would. It measures each failover (the lease's expiry, the standby's acquisition,
// its first write) and checks that no replica ever wrote outside its tenure as leader
// (Overlaps), that a deposed leader exits, and that no volume was wiped twice or freed unwiped
// (Replay). That is `make standby`'s; `make test` kills one idle leader.
func TestStandbyTakesOver(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts a control plane, the upstream controllers and several managers")
	}
	kills := envInt(t, EnvStandbyKills, 1)
	// Without STRATA_STANDBY_KILLS (`make test`): one kill of an idle leader; with it (`make
	// standby`): the pipeline's life.
	life := os.Getenv(EnvStandbyKills) != ""
	pauses := envInt(t, EnvStandbyPauses, 0)
	seed := envInt(t, EnvSeed, 1)
	tiers, sample := upstream.Samples(t)
	probe := probeTier(t, tiers)
	h := upstream.Start(t, upstream.Options{Fixtures: append(tiers, probe), JobNamespaces: []string{standbyNamespace}, WithoutStrimzi: true})
	ctx := context.Background()
	rec := Record(t, h.Config)
	// The harness's own manager goes away gracefully (SIGTERM: it releases its lease, the
	// manager sets LeaderElectionReleaseOnCancel), so that the replicas below elect among
	// themselves at once.
	h.Operator.Stop()

	args, leaseDuration := leaseTimings(t)
	s := &replicas{t: t, h: h, args: args}
	leader := s.start()
	testutil.Eventually(t, converge, leader.Name+" to take the lease", func() error {
		if ts := Tenures(s.writes()); len(ts) == 0 || ts[len(ts)-1].Replica != leader.Name {
			return fmt.Errorf("tenures %v", ts)
		}
		return nil
	})
	s.start() // the standby
	t.Logf("lease %s; %s leads", strings.Join(args, " "), leader)

	p := sample.DeepCopy()
	p.Namespace = standbyNamespace
	p.Spec.VolumeReclaimPolicy = "Delete"
	if err := h.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: standbyNamespace}}); err != nil {
		t.Fatal(err)
	}
	// Created and holding local volumes, so that the deletion below has volumes to wipe.
	running := func() error {
		if err := observed(ctx, h, p); err != nil {
			return err
		}
		if err := created(ctx, h, p); err != nil {
			return err
		}
		return holds(ctx, h, p)
	}
	if life {
		create(ctx, t, h, p)
		testutil.Eventually(t, converge, "the pipeline observed, its volumes bound", running)
	}

	// The life's steps, in turn; each failover lands in one (a pipeline created and deleted
	// again and again: each deletion wipes every local volume its claims held).
	steps := []struct {
		name string
		act  func(t *testing.T)
		done func() error
	}{
		{"delete", func(t *testing.T) { remove(ctx, t, h, p) }, func() error { return released(ctx, h, p) }},
		{"create", func(t *testing.T) { create(ctx, t, h, p) }, running},
		{"scale up", func(t *testing.T) { setLoad(ctx, t, h, p, 14000) }, func() error { return observed(ctx, h, p) }},
		{"scale down", func(t *testing.T) { setLoad(ctx, t, h, p, 10000) }, func() error { return observed(ctx, h, p) }},
	}
	if !life {
		// `make test`'s failover: no pipeline (its creation alone, ECK's pods and claims, takes
		// minutes here), only the probe tier's change for the new leader to make.
		steps = steps[:0]
		steps = append(steps, struct {
			name string
			act  func(t *testing.T)
			done func() error
		}{"idle", func(*testing.T) {}, func() error { return tierObserved(ctx, h, probe.Name) }})
	}
	rng := rand.New(rand.NewPCG(uint64(seed), 0))
	var killed, paused []Failover
	var exits []time.Duration
	bumps := 0
	for i := range kills + pauses {
		st := steps[i%len(steps)]
		pause := i >= kills
		how := "kill"
		if pause {
			how = "pause"
		}
		t.Run(fmt.Sprintf("%s %d in %s", how, i+1, st.name), func(t *testing.T) {
			st.act(t)
			// A moment of the work the change causes: the leader converges in about a second.
			time.Sleep(time.Duration(rng.Int64N(int64(time.Second) + 1)))
			old := leader
			lost := time.Now()
			if pause {
				old.Pause()
			} else {
				old.Kill()
			}
			// A change only the new leader can make, so that its first reconcile has a write to
			// show even when the old leader had finished the step's work.
			bumps++
			bumpProbe(ctx, t, h, probe.Name, bumps)
			f := s.awaitFailover(t, old.Name, lost, leaseDuration)
			t.Logf("%s of %s: lease expiry → %s acquired %s, → first write %s; %s → first write %s",
				how, old.Name, f.New, f.ExpiryToAcquired().Round(time.Millisecond), f.AcquiredToWork().Round(time.Millisecond),
				how, f.LostToWork().Round(time.Millisecond))
			if pause {
				paused = append(paused, f)
				resumed := time.Now()
				old.Resume()
				select {
				case <-old.Done():
					exits = append(exits, time.Since(resumed))
					t.Logf("%s exited %s after it went on", old.Name, time.Since(resumed).Round(time.Millisecond))
				case <-time.After(converge):
					t.Fatalf("%s still runs %s after it went on, deposed", old.Name, converge)
				}
				if b, err := os.ReadFile(old.LogFile()); err != nil || !strings.Contains(string(b), "leader election lost") {
					t.Errorf("%s's log does not say it lost the election (%v)", old.Name, err)
				}
			} else {
				killed = append(killed, f)
			}
			leader = s.byName(f.New)
			s.start() // the Deployment's replacement, a standby
			testutil.Eventually(t, converge, st.name+" done by the new leader", st.done)
		})
		if t.Failed() {
			break
		}
	}

	all := s.writes()
	for _, v := range Overlaps(all) {
		t.Error(v)
	}
	events := rec.Events()
	for _, v := range Replay(events, nil) {
		t.Error(v)
	}
	wipes := rec.Count(KindCleanupPod, func(e Event) bool { return e.Phase == "Succeeded" })
	work := 0
	var renewals []time.Duration
	for _, w := range all {
		if w.Work() {
			work++
		}
		if w.Lease && w.Succeeded() {
			renewals = append(renewals, w.Done.Sub(w.At))
		}
	}
	t.Logf("Lease writes (%d): round trip p50 %s, p99 %s, max %s", len(renewals), pct(renewals, 50), pct(renewals, 99), pct(renewals, 100))
	t.Logf("%d kills, %d pauses (seed %d); %d writes recorded (%d to managed objects), %d events replayed, %d cleanup pod successes seen",
		len(killed), len(paused), seed, len(all), work, len(events), wipes)
	for _, g := range []struct {
		name string
		fs   []Failover
	}{{"kill", killed}, {"pause", paused}} {
		if len(g.fs) == 0 {
			continue
		}
		var expiry, first, whole []time.Duration
		for _, f := range g.fs {
			expiry, first, whole = append(expiry, f.ExpiryToAcquired()), append(first, f.AcquiredToWork()), append(whole, f.LostToWork())
		}
		t.Logf("%s (%d): lease expiry → acquired p50 %s p99 %s; acquired → first write p50 %s p99 %s; %s → first write p50 %s p99 %s",
			g.name, len(g.fs), pct(expiry, 50), pct(expiry, 99), pct(first, 50), pct(first, 99), g.name, pct(whole, 50), pct(whole, 99))
	}
	if len(exits) > 0 {
		t.Logf("a deposed leader exited after it went on: p50 %s p99 %s", pct(exits, 50), pct(exits, 99))
	}
	h.Alive(t)
}

// released is nil once the pipeline and its children are gone, no local volume is held for a
// claim of its namespace and no cleanup pod is left: what Strata does on deletion under Delete.
// Unlike deleted (TestCrashAnywhere's), it does not wait for dynamically provisioned volumes:
// deleting those is the controller-manager's.
func released(ctx context.Context, h *upstream.Cluster, p *v1alpha1.AnalyticsPipeline) error {
	return freed(ctx, h, p, true)
}

// created is nil once every StatefulSet of the pipeline's namespace (ECK's, the Spark operator's)
// has made all its pods, so all its claims, and every claim there is bound. A deletion before that
// races the StatefulSet controller: a claim made for a pod created as its Elasticsearch is deleted
// outlives it, holding its volume (seen twice; neither Strata's object nor its decision).
func created(ctx context.Context, h *upstream.Cluster, p *v1alpha1.AnalyticsPipeline) error {
	var sets appsv1.StatefulSetList
	if err := h.Client.List(ctx, &sets, client.InNamespace(p.Namespace)); err != nil {
		return err
	}
	if len(sets.Items) == 0 {
		return fmt.Errorf("no StatefulSet in %s yet", p.Namespace)
	}
	for _, s := range sets.Items {
		if s.Spec.Replicas == nil || s.Status.ObservedGeneration != s.Generation || s.Status.Replicas != *s.Spec.Replicas {
			return fmt.Errorf("StatefulSet %s has %d of its pods", s.Name, s.Status.Replicas)
		}
	}
	var claims corev1.PersistentVolumeClaimList
	if err := h.Client.List(ctx, &claims, client.InNamespace(p.Namespace)); err != nil {
		return err
	}
	for _, c := range claims.Items {
		if c.Status.Phase != corev1.ClaimBound {
			return fmt.Errorf("claim %s is %s", c.Name, c.Status.Phase)
		}
	}
	return nil
}

// tierObserved is nil once the StorageTier's status observed its generation.
func tierObserved(ctx context.Context, h *upstream.Cluster, name string) error {
	tier := &v1alpha1.StorageTier{}
	if err := h.Client.Get(ctx, client.ObjectKey{Name: name}, tier); err != nil {
		return err
	}
	if tier.Status.ObservedGeneration != tier.Generation {
		return fmt.Errorf("tier %s: generation %d, observed %d", name, tier.Generation, tier.Status.ObservedGeneration)
	}
	return nil
}

// holds is nil once a local volume is bound to a claim of the pipeline's namespace.
func holds(ctx context.Context, h *upstream.Cluster, p *v1alpha1.AnalyticsPipeline) error {
	var pvs corev1.PersistentVolumeList
	if err := h.Client.List(ctx, &pvs); err != nil {
		return err
	}
	for _, pv := range pvs.Items {
		if pv.Spec.Local != nil && pv.Spec.ClaimRef != nil && pv.Spec.ClaimRef.Namespace == p.Namespace && pv.Status.Phase == corev1.VolumeBound {
			return nil
		}
	}
	return fmt.Errorf("no local volume bound to a claim in %s yet", p.Namespace)
}

func pct(ds []time.Duration, q float64) time.Duration {
	return percentile(ds, q).Round(time.Millisecond)
}

// replicas are the manager replicas the test started, each behind its proxy.
type replicas struct {
	t       *testing.T
	h       *upstream.Cluster
	args    []string
	proxies []*Proxy
	started []*lab.Replica
}

// start starts one more replica behind a proxy of its own; both live until the test ends.
func (s *replicas) start() *lab.Replica {
	name := fmt.Sprintf("replica-%d", len(s.started)+1)
	px := StartProxy(s.t, s.h.Config, name)
	s.t.Cleanup(func() {
		for _, e := range px.Errors() {
			s.t.Logf("%s's proxy: %s", name, e)
		}
	})
	r := s.h.Operator.StartReplica(s.t, name, lab.ReplicaOptions{Server: px.URL, ServerCA: px.CA, Args: s.args})
	s.proxies, s.started = append(s.proxies, px), append(s.started, r)
	return r
}

func (s *replicas) byName(name string) *lab.Replica {
	for _, r := range s.started {
		if r.Name == name {
			return r
		}
	}
	s.t.Fatalf("no replica %s", name)
	return nil
}

// writes is every replica's writes so far.
func (s *replicas) writes() []Write {
	var all []Write
	for _, px := range s.proxies {
		all = append(all, px.Writes()...)
	}
	return all
}

// awaitFailover waits until another replica has taken the lease over from old, lost at lost,
// and written.
func (s *replicas) awaitFailover(t *testing.T, old string, lost time.Time, lease time.Duration) Failover {
	t.Helper()
	var f Failover
	testutil.Eventually(t, converge, "a standby to take over from "+old+" and write", func() error {
		var err error
		f, err = MeasureFailover(s.writes(), old, lost, lease)
		return err
	})
	return f
}

// leaseTimings are the replicas' extra arguments (STRATA_STANDBY_LEASE's timings, or none: the
// chart's) and the lease duration they run with.
func leaseTimings(t *testing.T) ([]string, time.Duration) {
	t.Helper()
	flags := []string{"--leader-elect-lease-duration", "--leader-elect-renew-deadline", "--leader-elect-retry-period"}
	if v := os.Getenv(EnvStandbyLease); v != "" {
		parts := strings.Split(v, "/")
		if len(parts) != 3 {
			t.Fatalf("%s=%q: want lease/renew/retry, e.g. 15s/10s/2s", EnvStandbyLease, v)
		}
		d, err := time.ParseDuration(parts[0])
		if err != nil {
			t.Fatalf("%s: %v", EnvStandbyLease, err)
		}
		var args []string
		for i, f := range flags {
			args = append(args, f+"="+parts[i])
		}
		return args, d
	}
	for _, a := range lab.RenderChart(t, "strata", "strata-system").Args {
		if v, ok := strings.CutPrefix(a, flags[0]+"="); ok {
			d, err := time.ParseDuration(v)
			if err != nil {
				t.Fatalf("the chart's %s: %v", a, err)
			}
			return nil, d
		}
	}
	t.Fatalf("the chart sets no %s", flags[0])
	return nil, 0
}

// probeTier is a copy of the samples' first dynamic tier under another name, which no pipeline
// uses: a change to it is work only the leader's StorageTier controller does (it writes the
// tier's observedGeneration).
func probeTier(t *testing.T, tiers []client.Object) *v1alpha1.StorageTier {
	t.Helper()
	for _, o := range tiers {
		if tier, ok := o.(*v1alpha1.StorageTier); ok && tier.Spec.Local == nil {
			probe := &v1alpha1.StorageTier{ObjectMeta: metav1.ObjectMeta{Name: "standby-probe"}, Spec: *tier.Spec.DeepCopy()}
			return probe
		}
	}
	t.Fatal("the samples hold no dynamic tier")
	return nil
}

func bumpProbe(ctx context.Context, t *testing.T, h *upstream.Cluster, name string, n int) {
	t.Helper()
	patch := client.RawPatch(types.MergePatchType, []byte(fmt.Sprintf(`{"spec":{"monthlyPricePerGiB":"9.%d"}}`, n)))
	if err := h.Client.Patch(ctx, &v1alpha1.StorageTier{ObjectMeta: metav1.ObjectMeta{Name: name}}, patch); err != nil {
		t.Fatal(err)
	}
}
