package autoscale

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"
)

// MetricsSource evaluates the autoscaler's queries. The operator uses Prometheus; tests use a
// fake that serves recorded series.
type MetricsSource interface {
	// Read evaluates each query at now. A signal whose query returns nothing is absent from
	// the result; an error means no signal could be read at all (Prometheus unreachable).
	Read(ctx context.Context, queries map[Signal]string, now time.Time) (Observations, error)
}

// Sample is one signal's value and the time it was evaluated for.
type Sample struct {
	Value float64
	Time  time.Time
}

// Observations are the signals one reading returned. Problems notes why a signal is missing
// when its query failed (rather than returned nothing).
type Observations struct {
	Samples  map[Signal]Sample
	Problems map[Signal]string
}

// fresh returns the signal's value when it was read at most maxAge before now.
func (o Observations) fresh(s Signal, now time.Time, maxAge time.Duration) (float64, bool) {
	v, ok := o.Samples[s]
	if !ok || now.Sub(v.Time) > maxAge || v.Time.After(now.Add(maxAge)) {
		return 0, false
	}
	return v.Value, true
}

// missing describes the signals of a resource that have no fresh sample, for the condition's
// message: "consumerLag (no samples), ingestRate (stale: 2m0s old)".
func (o Observations) missing(signals []Signal, now time.Time, maxAge time.Duration) []string {
	var out []string
	for _, s := range signals {
		if _, ok := o.fresh(s, now, maxAge); ok {
			continue
		}
		switch v, ok := o.Samples[s]; {
		case o.Problems[s] != "":
			out = append(out, fmt.Sprintf("%s (%s)", s, o.Problems[s]))
		case ok:
			out = append(out, fmt.Sprintf("%s (stale: %s old)", s, now.Sub(v.Time).Round(time.Second)))
		default:
			out = append(out, fmt.Sprintf("%s (no samples)", s))
		}
	}
	sort.Strings(out)
	return out
}

// joinLimited joins at most n items and says how many more there are, so that a condition
// message stays short when many signals are missing.
func joinLimited(items []string, n int) string {
	if len(items) <= n {
		return strings.Join(items, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(items[:n], ", "), len(items)-n)
}
