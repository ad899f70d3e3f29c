package lab

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/common/model"
)

// Wait is the record of a bounded wait on a query: how long it waited, how often it asked, and
// each distinct answer in order with when it first came. The lab's checks wait for a state
// (the job caught up, an alert firing) instead of assuming it after a fixed time, and print
// this when the state never came, so that a failure on a slower or busier machine can be read
// from the log alone: "waited 3m0s (170 polls): at 0s 25249; at 41s 6539; at 2m10s 4120".
type Wait struct {
	Query string
	For   time.Duration
	Polls int
	Seen  []Seen
}

// Seen is one answer of a wait, summarised, and how long into the wait it first came.
type Seen struct {
	At     time.Duration
	Answer string
}

// maxSeen bounds the answers a wait keeps: the first few and the latest (a wait on a drifting
// value changes answer at every poll).
const maxSeen = 12

func (w *Wait) record(at time.Duration, r Result) {
	w.Polls++
	a := r.brief()
	if n := len(w.Seen); n > 0 && w.Seen[n-1].Answer == a {
		return
	}
	w.Seen = append(w.Seen, Seen{At: at, Answer: a})
	if len(w.Seen) > maxSeen {
		// Keep the first three answers and the latest ones.
		w.Seen = append(w.Seen[:3], w.Seen[4:]...)
	}
}

func (w *Wait) String() string {
	if w == nil {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "waited %s (%d polls)", w.For.Round(time.Second), w.Polls)
	for i, s := range w.Seen {
		sep := "; "
		if i == 0 {
			sep = ": "
		}
		fmt.Fprintf(&b, "%sat %s %s", sep, s.At.Round(time.Second), s.Answer)
	}
	return b.String()
}

// brief is the answer without labels: its values in order, or its error.
func (r Result) brief() string {
	switch {
	case r.Err != nil:
		return "error " + r.Err.Error()
	case len(r.Series) == 0:
		return "no data"
	case len(r.Series) == 1:
		return strconv.FormatFloat(r.Series[0].Value, 'g', 6, 64)
	}
	vals := make([]string, len(r.Series))
	for i, s := range r.Series {
		vals[i] = strconv.FormatFloat(s.Value, 'g', 6, 64)
	}
	return fmt.Sprintf("%d series [%s]", len(r.Series), strings.Join(vals, " "))
}

// String is the answer with its series' labels and, after a wait, what the wait saw.
func (r Result) String() string {
	var b strings.Builder
	switch {
	case r.Err != nil:
		fmt.Fprintf(&b, "error %v", r.Err)
	case len(r.Series) == 0:
		b.WriteString("no data")
	default:
		for i, s := range r.Series {
			if i > 0 {
				b.WriteString(", ")
			}
			labels := make(model.LabelSet, len(s.Labels))
			for k, v := range s.Labels {
				labels[model.LabelName(k)] = model.LabelValue(v)
			}
			fmt.Fprintf(&b, "%s %s", labels, strconv.FormatFloat(s.Value, 'g', 6, 64))
		}
	}
	if r.Wait != nil {
		fmt.Fprintf(&b, " (%s)", r.Wait)
	}
	return b.String()
}

// WaitFor polls q every second until ok accepts its result or timeout passes; it returns the
// last result, with the record of the wait, and whether ok accepted it.
func (p *Prometheus) WaitFor(ctx context.Context, q string, timeout time.Duration, ok func(Result) bool) (Result, bool) {
	began := time.Now()
	deadline := began.Add(timeout)
	w := &Wait{Query: q}
	for {
		r := p.Query(ctx, q)
		w.record(time.Since(began), r)
		w.For = time.Since(began)
		r.Wait = w
		if ok(r) {
			return r, true
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return r, false
		}
		time.Sleep(time.Second)
	}
}
