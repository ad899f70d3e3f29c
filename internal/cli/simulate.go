package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/strata-dev/strata/internal/simulate"
)

const simulateUsage = `Usage: strata simulate -f FILE [-f FILE ...] --trace trace.csv [-o table|json] [--plot out.svg] [--delays delays.yaml]

Replays a load trace through the pipeline's plan and its autoscaler, in simulated time, and
reports what the autoscaler did and what it cost: replica-seconds per resource against a static
configuration sized for the trace's peak, scale actions and reversals, seconds with capacity
below demand, and the largest lag. The pipeline's spec.autoscaling settings are used (enabled or
not); its declared workload is the floor the autoscaler never goes under. When Kafka's intake
was below the demand, the trace is replayed with spec.kafka.brokers.min raised, and the fewest
with which the producers never wait is printed with its cost (brokers kept in advance).

The trace is CSV with the header seconds,messagesPerSecond (and optionally messageBytes): the
load is constant from one row to the next, and the last row's seconds ends the trace.

` + inputHelp + `
Flags:
`

func runSimulate(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("strata simulate", flag.ContinueOnError)
	fl.SetOutput(stderr)
	var in files
	fl.Var(&in, "f", "a YAML file with the AnalyticsPipeline and the StorageTiers it names (repeatable; - reads stdin)")
	tracePath := fl.String("trace", "", "the load trace, CSV: seconds,messagesPerSecond[,messageBytes]")
	output := fl.String("o", "table", "output format: table or json")
	plotPath := fl.String("plot", "", "also draw demand, capacity and replicas over time into this SVG file")
	delaysPath := fl.String("delays", "", "a YAML file overriding the actuation delays (docs/simulate.md)")
	fl.Usage = func() {
		fmt.Fprint(stderr, simulateUsage)
		fl.PrintDefaults()
	}
	if code, done := parseCommand("simulate", fl, args, &in, output, stderr); done {
		return code
	}
	if *tracePath == "" {
		fmt.Fprintln(stderr, "strata simulate: --trace FILE is required")
		return ExitUsage
	}
	fail := func(err error) int {
		fmt.Fprintf(stderr, "strata simulate: %v\n", err)
		return ExitError
	}
	input, err := load(ctx, in, stdin, noteTo(stderr, "simulate"))
	if err != nil {
		return fail(err)
	}
	trace, err := readTrace(*tracePath)
	if err != nil {
		return fail(err)
	}
	delays, err := readDelays(*delaysPath)
	if err != nil {
		return fail(err)
	}
	res, err := simulate.Run(input.pipeline, input.tiers, trace, delays)
	if err != nil {
		return fail(fmt.Errorf("%s: %w", input.pipelineSource, err))
	}
	// Where the producers waited, what brokers kept in advance would have done: no decision
	// after a rise begins carries one shorter than a broker's join (simulate.KeepBrokers).
	if res.BrokersKept, err = simulate.KeepBrokers(input.pipeline, input.tiers, trace, delays, res); err != nil {
		return fail(fmt.Errorf("%s: %w", input.pipelineSource, err))
	}
	if *plotPath != "" {
		if err := simulate.Plot(res, *plotPath); err != nil {
			return fail(err)
		}
	}
	if *output == "json" {
		if err := printJSON(stdout, res); err != nil {
			return fail(err)
		}
		return ExitOK
	}
	if err := simulate.WriteTable(stdout, res); err != nil {
		return fail(err)
	}
	return ExitOK
}

func readTrace(path string) (simulate.Trace, error) {
	f, err := os.Open(path)
	if err != nil {
		return simulate.Trace{}, err
	}
	defer f.Close()
	return simulate.ParseTrace(io.LimitReader(f, maxTraceBytes), path)
}

// readDelays reads a YAML object of delays over the defaults (durations as "90s", "2m").
func readDelays(path string) (simulate.Delays, error) {
	d := simulate.DefaultDelays()
	if path == "" {
		return d, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return d, err
	}
	var o struct {
		BrokerStart             *string  `json:"brokerStart"`
		RebalanceBytesPerSecond *int64   `json:"rebalanceBytesPerSecond"`
		BrokerDataFraction      *float64 `json:"brokerDataFraction"`
		SparkResubmit           *string  `json:"sparkResubmit"`
		DataNodeStart           *string  `json:"dataNodeStart"`
		DataNodeDrain           *string  `json:"dataNodeDrain"`
	}
	if err := yaml.UnmarshalStrict(b, &o); err != nil {
		return d, fmt.Errorf("%s: %w", path, err)
	}
	for _, x := range []struct {
		name string
		v    *string
		out  *time.Duration
	}{{"brokerStart", o.BrokerStart, &d.BrokerStart}, {"sparkResubmit", o.SparkResubmit, &d.SparkResubmit},
		{"dataNodeStart", o.DataNodeStart, &d.DataNodeStart}, {"dataNodeDrain", o.DataNodeDrain, &d.DataNodeDrain}} {
		if x.v == nil {
			continue
		}
		v, err := time.ParseDuration(*x.v)
		if err != nil {
			return d, fmt.Errorf("%s: %s: %w", path, x.name, err)
		}
		*x.out = v
	}
	if o.RebalanceBytesPerSecond != nil {
		d.RebalanceBytesPerSecond = *o.RebalanceBytesPerSecond
	}
	if o.BrokerDataFraction != nil {
		d.BrokerDataFraction = *o.BrokerDataFraction
	}
	if err := d.Validate(); err != nil {
		return d, fmt.Errorf("%s: %w", path, err)
	}
	return d, nil
}

// maxTraceBytes bounds what a trace file may hold: a month at one row a second is ~60 MB.
const maxTraceBytes = 64 << 20
