package chaos

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sort"
	"strconv"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"

	"github.com/strata-dev/strata/internal/testutil"
	"github.com/strata-dev/strata/internal/upstream"
)

// APIFault restarts kube-apiserver at random moments of the manager's work, as a control plane
// node's rolling restart does, and, with Compact, first compacts etcd's history to its current
// revision: every watch cut by the restart then resumes from a resourceVersion that no longer
// exists, is answered 410 Gone ("too old resource version"), and its informer must list again.
// etcd, the manager and every upstream controller keep running; only their connections break.
type APIFault struct {
	Cluster *upstream.Cluster
	Rand    *rand.Rand
	// MaxUp is the longest the API server runs, after the step's change, before it is restarted:
	// the restart lands anywhere in the work the change causes.
	MaxUp time.Duration
	// Compact compacts etcd before each restart.
	Compact bool
	// Crash kills the API server with SIGKILL rather than stopping it with SIGTERM (which
	// drains requests for up to a minute, as a rolling restart does).
	Crash bool
	// Args are the manager's, when it must be started again (it exited: below).
	Args []string

	faults, managerExits          int
	stopped, started, convergence []time.Duration
}

// Storm restarts the API server n times, change (when not nil) called with the fault's number
// before each. A manager that exited meanwhile is started again, as its kubelet would, and
// counted: with leader election, controller-runtime ends a manager that cannot renew its Lease
// within its renew deadline (10 s), which a slow restart can exceed.
func (f *APIFault) Storm(t testing.TB, n int, change func(i int)) {
	t.Helper()
	for i := range n {
		if change != nil {
			change(i)
		}
		time.Sleep(time.Duration(f.Rand.Int64N(int64(f.MaxUp) + 1)))
		var rev int64
		if f.Compact {
			rev = f.Cluster.CompactEtcd(t)
		}
		began := time.Now()
		stopped, started := f.Cluster.RestartAPIServer(t, f.Crash)
		f.stopped, f.started = append(f.stopped, stopped), append(f.started, started)
		f.faults++
		f.settle(t, began)
		if f.Compact {
			// The proof that the fault is the one meant: a watch resumed from before the
			// compaction is refused, as every informer's is.
			testutil.Eventually(t, time.Minute, "a watch from before the compaction refused as too old", func() error {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				return f.Cluster.Expired(ctx, strconv.FormatInt(rev-1, 10))
			})
		}
		if op := f.Cluster.Operator; !op.Running() {
			f.managerExits++
			t.Logf("the manager exited during the API server's restart: started again, as a kubelet would")
			op.Restart(t, f.Args...)
		}
	}
}

// settle waits until the manager either renewed its leader Lease after the API server came back
// or exited (a manager without leader election, whose Lease nobody renewed before the restart,
// is settled at once): what a manager does with a lost renewal shows only then.
func (f *APIFault) settle(t testing.TB, began time.Time) {
	t.Helper()
	back := time.Now()
	testutil.Eventually(t, 2*time.Minute, "the manager renewed its Lease or exited", func() error {
		if !f.Cluster.Operator.Running() {
			return nil
		}
		var leases coordinationv1.LeaseList
		if err := f.Cluster.Client.List(context.Background(), &leases); err != nil {
			return err
		}
		for _, l := range leases.Items {
			if l.Name != LeaseName || l.Spec.RenewTime == nil || l.Spec.LeaseDurationSeconds == nil {
				continue
			}
			renewed := l.Spec.RenewTime.Time
			if renewed.After(back) || renewed.Add(time.Duration(*l.Spec.LeaseDurationSeconds)*time.Second).Before(began) {
				return nil
			}
			return fmt.Errorf("lease %s last renewed %s, the API server back at %s", l.Name, renewed.Format(time.RFC3339Nano), back.Format(time.RFC3339Nano))
		}
		return nil // no Lease: no leader election
	})
}

// LeaseName is the manager's leader election Lease (cmd/manager: LeaderElectionID).
const LeaseName = "strata.strata.dev"

// Converged records how long the manager took to converge after the last restart ended.
func (f *APIFault) Converged(restarted time.Time) time.Duration {
	d := time.Since(restarted)
	f.convergence = append(f.convergence, d)
	return d
}

// Faults is how many times the API server was restarted, and ManagerExits how many times the
// manager exited because of it.
func (f *APIFault) Faults() int       { return f.faults }
func (f *APIFault) ManagerExits() int { return f.managerExits }

// Stopped, Started and Convergence are the p-th percentiles of how long the old API server took
// to stop, the new one to answer, and the manager to converge after it did.
func (f *APIFault) Stopped(p float64) time.Duration     { return percentile(f.stopped, p) }
func (f *APIFault) Started(p float64) time.Duration     { return percentile(f.started, p) }
func (f *APIFault) Convergence(p float64) time.Duration { return percentile(f.convergence, p) }

// percentile is the p-th percentile (0 < p ≤ 100, nearest rank) of ds, 0 when empty.
func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	rank := int(p/100*float64(len(s))+0.999999) - 1
	return s[min(max(rank, 0), len(s)-1)]
}
