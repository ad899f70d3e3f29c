package simulate

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

// TestTimeline prints the timeline of the step and the spike around their change (go test -v
// -run Timeline; make simulate-timeline), and checks it shows the step's decisions.
func TestTimeline(t *testing.T) {
	p, tiers := samplePipeline(t)
	for _, c := range []struct {
		name     string
		from, to float64
	}{{"step-up", 1740, 3000}, {"flash-spike", 1740, 3000}} {
		var out bytes.Buffer
		res, err := Timeline(&out, p, tiers, SampleTraces()[c.name], DefaultDelays(), c.from, c.to)
		if err != nil {
			t.Fatal(err)
		}
		if os.Getenv("STRATA_TIMELINE") != "" || testing.Verbose() {
			t.Logf("%s\n%s", c.name, out.String())
		}
		if len(res.Decisions) > 0 && !strings.Contains(out.String(), res.Decisions[0].Action) {
			t.Errorf("%s: the timeline shows no decision:\n%s", c.name, out.String())
		}
	}
}
