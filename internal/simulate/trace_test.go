package simulate

import (
	"strings"
	"testing"
)

func TestParseTrace(t *testing.T) {
	for _, tc := range []struct {
		name, csv, err string
		points         int
	}{
		{name: "two columns", csv: "seconds,messagesPerSecond\n0,100\n60,200\n120,200\n", points: 3},
		{name: "with message sizes and a byte-order mark", csv: "\ufeffseconds,messagesPerSecond,messageBytes\n0,100,512\n60,200,\n", points: 2},
		{name: "empty", csv: "", err: "t.csv: empty trace"},
		{name: "wrong header", csv: "time,rate\n0,1\n1,1\n", err: `t.csv:1: header "time,rate"`},
		{name: "not a number", csv: "seconds,messagesPerSecond\n0,100\n60,lots\n", err: `t.csv:3: messagesPerSecond "lots": want a number`},
		{name: "NaN", csv: "seconds,messagesPerSecond\n0,NaN\n60,1\n", err: `t.csv:2: messagesPerSecond "NaN"`},
		{name: "negative rate", csv: "seconds,messagesPerSecond\n0,100\n60,-1\n", err: "t.csv:3: messagesPerSecond -1 is negative"},
		{name: "time goes back", csv: "seconds,messagesPerSecond\n0,100\n60,1\n30,1\n", err: "t.csv:4: seconds 30 is not after the previous row's 60"},
		{name: "does not start at 0", csv: "seconds,messagesPerSecond\n10,100\n60,1\n", err: "t.csv:2: the first row must be at seconds 0"},
		{name: "one row", csv: "seconds,messagesPerSecond\n0,100\n", err: "at least two rows"},
		{name: "a missing column", csv: "seconds,messagesPerSecond\n0,100\n60\n", err: "t.csv: record on line 3: wrong number of fields"},
		{name: "bad size", csv: "seconds,messagesPerSecond,messageBytes\n0,100,0\n60,1,1\n", err: `t.csv:2: messageBytes "0"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr, err := ParseTrace(strings.NewReader(tc.csv), "t.csv")
			switch {
			case tc.err == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
				t.Fatalf("error %v, want one containing %q", err, tc.err)
			case tc.err == "" && len(tr.Points) != tc.points:
				t.Fatalf("%d points, want %d", len(tr.Points), tc.points)
			}
		})
	}
}

func TestTraceAtAndPeak(t *testing.T) {
	tr := Trace{Points: []Point{{0, 100, 0}, {60, 300, 0}, {120, 200, 100}, {180, 0, 0}}}
	for s, want := range map[float64]float64{0: 100, 59.9: 100, 60: 300, 119: 300, 120: 200, 500: 0} {
		if got := tr.At(s).MessagesPerSecond; got != want {
			t.Errorf("At(%g) = %g, want %g", s, got, want)
		}
	}
	// 300 records of 1000 bytes beat 200 of 100; the last row only ends the trace.
	if got := tr.Peak(1000); got.MessagesPerSecond != 300 {
		t.Errorf("Peak = %+v, want the 300 records/s row", got)
	}
	if tr.Duration() != 180 {
		t.Errorf("Duration = %g, want 180", tr.Duration())
	}
	back, err := ParseTrace(strings.NewReader(string(tr.CSV())), "csv")
	if err != nil || len(back.Points) != 4 || back.Points[2].MessageBytes != 100 {
		t.Errorf("CSV round trip: %+v, %v", back, err)
	}
}
