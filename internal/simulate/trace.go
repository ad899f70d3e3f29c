package simulate

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// Point is one row of a trace: from Seconds on (until the next row), MessagesPerSecond arrive,
// each MessageBytes long (0: the pipeline's spec.workload.messageBytes).
type Point struct {
	Seconds           float64
	MessagesPerSecond float64
	MessageBytes      int64
}

// Trace is a load over time, piecewise constant between its points. The last point ends the
// trace: its time is the trace's duration.
type Trace struct {
	Points []Point
}

// maxTraceRows bounds what a trace may hold (a week at one row a second is 604,800).
const maxTraceRows = 1_000_000

// ParseTrace reads a CSV trace with the header `seconds,messagesPerSecond` and optionally a
// third column `messageBytes`. Errors name the source and the line.
func ParseTrace(r io.Reader, source string) (Trace, error) {
	cr := csv.NewReader(r)
	cr.TrimLeadingSpace = true
	cr.ReuseRecord = true
	header, err := cr.Read()
	if errors.Is(err, io.EOF) {
		return Trace{}, fmt.Errorf("%s: empty trace: want the header seconds,messagesPerSecond[,messageBytes]", source)
	}
	if err != nil {
		return Trace{}, fmt.Errorf("%s: %w", source, err)
	}
	cols := make([]string, len(header))
	for i, h := range header {
		cols[i] = strings.TrimSpace(strings.TrimPrefix(h, "\ufeff"))
	}
	switch strings.Join(cols, ",") {
	case "seconds,messagesPerSecond", "seconds,messagesPerSecond,messageBytes":
	default:
		return Trace{}, fmt.Errorf("%s:1: header %q: want seconds,messagesPerSecond[,messageBytes]", source, strings.Join(cols, ","))
	}
	cr.FieldsPerRecord = len(cols)
	var t Trace
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		line, _ := cr.FieldPos(0)
		if err != nil {
			return Trace{}, fmt.Errorf("%s: %w", source, err)
		}
		if len(t.Points) >= maxTraceRows {
			return Trace{}, fmt.Errorf("%s:%d: more than %d rows", source, line, maxTraceRows)
		}
		p, err := parseRow(rec)
		if err != nil {
			return Trace{}, fmt.Errorf("%s:%d: %w", source, line, err)
		}
		if n := len(t.Points); n == 0 && p.Seconds != 0 {
			return Trace{}, fmt.Errorf("%s:%d: the first row must be at seconds 0, not %g", source, line, p.Seconds)
		} else if n > 0 && p.Seconds <= t.Points[n-1].Seconds {
			return Trace{}, fmt.Errorf("%s:%d: seconds %g is not after the previous row's %g", source, line, p.Seconds, t.Points[n-1].Seconds)
		}
		t.Points = append(t.Points, p)
	}
	if len(t.Points) < 2 {
		return Trace{}, fmt.Errorf("%s: a trace needs at least two rows: the last one's seconds is where it ends", source)
	}
	return t, nil
}

func parseRow(rec []string) (Point, error) {
	var p Point
	var err error
	if p.Seconds, err = parseFinite("seconds", rec[0]); err != nil {
		return p, err
	}
	if p.Seconds < 0 {
		return p, fmt.Errorf("seconds %g is negative", p.Seconds)
	}
	if p.MessagesPerSecond, err = parseFinite("messagesPerSecond", rec[1]); err != nil {
		return p, err
	}
	if p.MessagesPerSecond < 0 {
		return p, fmt.Errorf("messagesPerSecond %g is negative", p.MessagesPerSecond)
	}
	if len(rec) > 2 && strings.TrimSpace(rec[2]) != "" {
		b, err := strconv.ParseInt(strings.TrimSpace(rec[2]), 10, 64)
		if err != nil || b <= 0 || b > 1<<30 {
			return p, fmt.Errorf("messageBytes %q: want a whole number of bytes from 1 to 1073741824", rec[2])
		}
		p.MessageBytes = b
	}
	return p, nil
}

func parseFinite(name, s string) (float64, error) {
	v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || math.Abs(v) > 1e12 {
		return 0, fmt.Errorf("%s %q: want a number", name, s)
	}
	return v, nil
}

// Duration is where the trace ends, in seconds.
func (t Trace) Duration() float64 { return t.Points[len(t.Points)-1].Seconds }

// At returns the point in force at second s: the last one at or before it.
func (t Trace) At(s float64) Point {
	lo, hi := 0, len(t.Points)-1
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if t.Points[mid].Seconds <= s {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return t.Points[lo]
}

// Peak is the point with the highest byte rate (messages per second times their size, the
// pipeline's when a point has none).
func (t Trace) Peak(specBytes int64) Point {
	best := t.Points[0]
	bytes := func(p Point) float64 {
		if p.MessageBytes > 0 {
			return p.MessagesPerSecond * float64(p.MessageBytes)
		}
		return p.MessagesPerSecond * float64(specBytes)
	}
	for _, p := range t.Points[:len(t.Points)-1] {
		if bytes(p) > bytes(best) {
			best = p
		}
	}
	return best
}
