package chaos

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/strata-dev/strata/internal/lab"
)

// Monkey kills the manager with SIGKILL at random moments and starts it again, as a node's loss
// or the OOM killer would, from a seed so that a failing run can be repeated (the moments are
// the seed's; what the manager was doing at each depends on the machine's speed too).
type Monkey struct {
	Operator *lab.Operator
	Rand     *rand.Rand
	// MaxUp is the longest a manager runs, once ready, before it is killed: kills land anywhere
	// from its first reconcile to the middle of its work.
	MaxUp time.Duration
	// Args are added to every restart's arguments.
	Args []string

	kills       int
	convergence []time.Duration
}

// Storm kills the running manager n times, each a random time (up to MaxUp) after it became
// ready, starting a new one after each kill; a manager runs when it returns. change, when not
// nil, is called with the kill's number before each wait: a change of the spec just before the
// kill puts the kill in the middle of the work it causes, where a manager left alone would be
// done (the scenario ends with the change it means to converge to).
func (m *Monkey) Storm(t testing.TB, n int, change func(i int)) {
	t.Helper()
	for i := range n {
		if change != nil {
			change(i)
		}
		time.Sleep(time.Duration(m.Rand.Int64N(int64(m.MaxUp) + 1)))
		m.Operator.Kill()
		m.kills++
		m.Operator.Restart(t, m.Args...)
	}
}

// Converged records how long the last manager took, from its start, to reach a converged state
// (the scenario says when: restarted is when Storm returned).
func (m *Monkey) Converged(restarted time.Time) time.Duration {
	d := time.Since(restarted)
	m.convergence = append(m.convergence, d)
	return d
}

// Kills is how many times the manager was killed.
func (m *Monkey) Kills() int { return m.kills }

// Percentile is the p-th percentile (0 < p ≤ 100, nearest rank) of the recorded convergence times.
func (m *Monkey) Percentile(p float64) time.Duration { return percentile(m.convergence, p) }
