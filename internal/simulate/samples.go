package simulate

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
)

// SampleTraces are the traces in config/samples/traces, generated here so that they are
// reproducible (hack/gen-traces writes them; a test checks the files are current). Their
// loads suit the pipeline there (pipeline-autoscaled.yaml): a trough of 5,000 and a peak of
// 20,000 records/s of 9,028 bytes on 1 Gbit/s links.
func SampleTraces() map[string]Trace {
	return map[string]Trace{
		"diurnal":     diurnal(),
		"flash-spike": flashSpike(),
		"noisy-flat":  noisyFlat(),
		"step-up":     stepUp(),
	}
}

// diurnal is a day whose load follows the sun: 5,000 records/s at midnight, 20,000 at noon
// (4:1), one row a minute.
func diurnal() Trace {
	const day, trough, peak = 86400, 5000.0, 20000.0
	var t Trace
	for s := 0; s <= day; s += 60 {
		rate := trough + (peak-trough)*(1-math.Cos(2*math.Pi*float64(s)/day))/2
		t.Points = append(t.Points, Point{Seconds: float64(s), MessagesPerSecond: math.Round(rate)})
	}
	return t
}

// flashSpike is two hours at 8,000 records/s with ten minutes at 18,000 after half an hour.
func flashSpike() Trace {
	return Trace{Points: []Point{{0, 8000, 0}, {1800, 18000, 0}, {2400, 8000, 0}, {7200, 8000, 0}}}
}

// noisyFlat is six hours at 10,000 records/s, each minute off by up to ±10 % (a fixed seed).
func noisyFlat() Trace {
	rng := rand.New(rand.NewPCG(1, 2))
	var t Trace
	for s := 0; s <= 6*3600; s += 60 {
		t.Points = append(t.Points, Point{Seconds: float64(s), MessagesPerSecond: math.Round(10000 * (0.9 + 0.2*rng.Float64()))})
	}
	return t
}

// stepUp is half an hour at 6,000 records/s, then an hour at 16,000.
func stepUp() Trace {
	return Trace{Points: []Point{{0, 6000, 0}, {1800, 16000, 0}, {5400, 16000, 0}}}
}

// CSV writes a trace in the format ParseTrace reads.
func (t Trace) CSV() []byte {
	var b bytes.Buffer
	withBytes := false
	for _, p := range t.Points {
		withBytes = withBytes || p.MessageBytes > 0
	}
	if withBytes {
		b.WriteString("seconds,messagesPerSecond,messageBytes\n")
	} else {
		b.WriteString("seconds,messagesPerSecond\n")
	}
	for _, p := range t.Points {
		switch {
		case withBytes && p.MessageBytes > 0:
			fmt.Fprintf(&b, "%g,%g,%d\n", p.Seconds, p.MessagesPerSecond, p.MessageBytes)
		case withBytes:
			fmt.Fprintf(&b, "%g,%g,\n", p.Seconds, p.MessagesPerSecond)
		default:
			fmt.Fprintf(&b, "%g,%g\n", p.Seconds, p.MessagesPerSecond)
		}
	}
	return b.Bytes()
}
