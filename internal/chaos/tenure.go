package chaos

import (
	"errors"
	"fmt"
	"sort"
	"time"
)

// Tenure is one replica's leadership, as the writes to the Lease show it: from the write that
// made it the holder to the write that made another replica the holder.
type Tenure struct {
	Replica, Identity string
	// From is when the acquiring write reached the proxy (the replica cannot reconcile before it
	// asked). Until is when the next holder's acquiring write was answered (from then on the
	// API server holds another leader's lease); zero while the tenure lasts.
	From, Until time.Time
}

// Tenures orders the replicas' successful Lease writes and cuts them into tenures. A release
// (holder emptied on a graceful stop) ends no tenure by itself: the next acquisition does.
func Tenures(writes []Write) []Tenure {
	var lease []Write
	for _, w := range writes {
		if w.Lease && w.Succeeded() && w.Holder != "" {
			lease = append(lease, w)
		}
	}
	sort.SliceStable(lease, func(i, j int) bool { return lease[i].Done.Before(lease[j].Done) })
	var ts []Tenure
	for _, w := range lease {
		if n := len(ts); n > 0 && ts[n-1].Identity == w.Holder {
			continue // a renewal
		}
		if n := len(ts); n > 0 {
			ts[n-1].Until = w.Done
		}
		ts = append(ts, Tenure{Replica: w.Replica, Identity: w.Holder, From: w.At})
	}
	return ts
}

// Overlaps lists every write to something Strata manages (not its Lease, not an Event) that a
// replica made outside its own tenures: as a standby, or after another replica had taken the
// lease over. Failed writes count too: what matters is that a deposed leader still acted.
func Overlaps(writes []Write) []string {
	ts := Tenures(writes)
	var out []string
	for _, w := range writes {
		if !w.Work() {
			continue
		}
		if within(ts, w) {
			continue
		}
		out = append(out, fmt.Sprintf("%s wrote %s %s (answer %d) at %s, outside its tenures (%s)",
			w.Replica, w.Method, w.Path, w.Status, w.At.Format("15:04:05.000"), describe(ts, w.Replica)))
	}
	return out
}

func within(ts []Tenure, w Write) bool {
	for _, t := range ts {
		if t.Replica == w.Replica && !w.At.Before(t.From) && (t.Until.IsZero() || w.At.Before(t.Until)) {
			return true
		}
	}
	return false
}

func describe(ts []Tenure, replica string) string {
	s := ""
	for _, t := range ts {
		if t.Replica != replica {
			continue
		}
		until := "on"
		if !t.Until.IsZero() {
			until = t.Until.Format("15:04:05.000")
		}
		s += fmt.Sprintf("[%s, %s) ", t.From.Format("15:04:05.000"), until)
	}
	if s == "" {
		return "never the leader"
	}
	return s[:len(s)-1]
}

// Failover is one leader's loss and the next leader's start, on the proxies' clock.
type Failover struct {
	Old, New string
	// Lost is when the old leader was killed or paused; LastRenew when its last renewal before
	// that was answered; Expiry that plus the lease duration: when a standby may take over.
	Lost, LastRenew, Expiry time.Time
	// Acquired is when the new leader's acquiring write was answered; FirstWork when its first
	// write to anything Strata manages reached the proxy: its first reconcile's effect.
	Acquired, FirstWork time.Time
}

// ExpiryToAcquired, AcquiredToWork and LostToWork are the failover's parts and its whole.
func (f Failover) ExpiryToAcquired() time.Duration { return f.Acquired.Sub(f.Expiry) }
func (f Failover) AcquiredToWork() time.Duration   { return f.FirstWork.Sub(f.Acquired) }
func (f Failover) LostToWork() time.Duration       { return f.FirstWork.Sub(f.Lost) }

// errNotYet says the writes do not show the failover's end yet.
var errNotYet = errors.New("not yet")

// MeasureFailover finds, in the writes, the failover that followed the loss of the leader old at
// lost: its last renewal before, the next replica's acquisition after, and that replica's first
// write to anything Strata manages. It returns errNotYet (wrapped) until all are there.
func MeasureFailover(writes []Write, old string, lost time.Time, lease time.Duration) (Failover, error) {
	f := Failover{Old: old, Lost: lost}
	for _, w := range writes {
		if w.Replica == old && w.Lease && w.Succeeded() && w.Holder != "" && w.At.Before(lost) && w.Done.After(f.LastRenew) {
			f.LastRenew = w.Done
		}
	}
	if f.LastRenew.IsZero() {
		return f, fmt.Errorf("%s renewed no lease before it was lost", old)
	}
	f.Expiry = f.LastRenew.Add(lease)
	var from time.Time
	for _, t := range Tenures(writes) {
		if t.Replica != old && t.From.After(lost) {
			f.New, from = t.Replica, t.From
			break
		}
	}
	if f.New == "" {
		return f, fmt.Errorf("no replica took the lease over yet: %w", errNotYet)
	}
	for _, w := range writes {
		if w.Replica == f.New && w.Lease && w.Succeeded() && w.At.Equal(from) {
			f.Acquired = w.Done
		}
		if w.Replica == f.New && w.Work() && !w.At.Before(from) && (f.FirstWork.IsZero() || w.At.Before(f.FirstWork)) {
			f.FirstWork = w.At
		}
	}
	if f.FirstWork.IsZero() {
		return f, fmt.Errorf("%s took the lease over but wrote nothing yet: %w", f.New, errNotYet)
	}
	return f, nil
}
