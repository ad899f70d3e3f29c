package simulate

import (
	"math"
	"sort"
)

// flows keeps the cumulative counts a simulation needs to answer what Prometheus would: rates
// over a range, the lag a range ago, and how long the oldest waiting record has waited.
type flows struct {
	// arrived[t] counts the records that arrived in seconds [0, t]; done[t] those indexed.
	arrived, done []float64
	// ring holds the last range+1 seconds of cumulative flows and the lag.
	ring []ringEntry
}

type ringEntry struct {
	in, out, inBytes, outBytes, lag float64
}

func newFlows(seconds, rangeSec int) *flows {
	return &flows{arrived: make([]float64, seconds), done: make([]float64, seconds), ring: make([]ringEntry, rangeSec+1)}
}

func (f *flows) record(t int, arrived, in, out, inBytes, outBytes, lag float64) {
	prevA, prevD := 0.0, 0.0
	if t > 0 {
		prevA, prevD = f.arrived[t-1], f.done[t-1]
	}
	f.arrived[t], f.done[t] = prevA+arrived, prevD+out
	prev := ringEntry{}
	if t > 0 {
		prev = f.ring[(t-1)%len(f.ring)]
	}
	f.ring[t%len(f.ring)] = ringEntry{in: prev.in + in, out: prev.out + out, inBytes: prev.inBytes + inBytes,
		outBytes: prev.outBytes + outBytes, lag: lag}
}

// over returns the average rates over the last rng seconds up to t (records in, records out,
// bytes in, bytes out) and the lag rng seconds before t.
func (f *flows) over(t, rng int) (in, out, inBytes, outBytes, lagThen float64) {
	now := f.ring[t%len(f.ring)]
	if rng <= 0 {
		return 0, 0, 0, 0, now.lag
	}
	then := f.ring[(t-rng)%len(f.ring)]
	d := float64(rng)
	return (now.in - then.in) / d, (now.out - then.out) / d, (now.inBytes - then.inBytes) / d,
		(now.outBytes - then.outBytes) / d, then.lag
}

// age is how long, at the end of second t, the oldest record not yet indexed has waited, less
// the one second every record spends in the pipeline here: 0 when nothing waits.
func (f *flows) age(t int) float64 {
	done := f.done[t]
	if f.arrived[t]-done < 1e-6 {
		return 0
	}
	// The first second whose arrivals reach past what is done holds the oldest waiting record.
	first := sort.Search(t+1, func(i int) bool { return f.arrived[i] > done+1e-6 })
	return math.Max(float64(t-first), 0)
}
