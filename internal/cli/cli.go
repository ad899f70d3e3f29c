package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/internal/plan"
)

// Exit codes.
const (
	ExitOK    = 0
	ExitError = 1 // bad input or no plan
	ExitUsage = 2 // bad command line
)

const usage = `strata shows what the Strata operator would do, without a cluster.

Usage:
  strata plan -f FILE [-f FILE ...] [-o table|json]
  strata render -f FILE [-f FILE ...] [-o yaml|json] [-n NS] [--ingest-image IMAGE]
  strata simulate -f FILE [-f FILE ...] --trace FILE [-o table|json] [--plot out.svg]
  strata queries -f FILE [-f FILE ...] [-o table|json] [-n NS]

Commands:
  plan      plan an AnalyticsPipeline on the StorageTiers it names
  render    print the objects the operator would apply for it (Kafka, Spark, Elasticsearch ...)
  simulate  replay a load trace through the plan and the autoscaler
  queries   print the PromQL the autoscaler and the alerts run for a pipeline

Run 'strata <command> -h' for details.
`

// Main runs the command line and returns the process's exit code.
func Main(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return ExitUsage
	}
	switch args[0] {
	case "plan":
		return runPlan(ctx, args[1:], stdin, stdout, stderr)
	case "render":
		return runRender(ctx, args[1:], stdin, stdout, stderr)
	case "simulate":
		return runSimulate(ctx, args[1:], stdin, stdout, stderr)
	case "queries":
		return runQueries(ctx, args[1:], stdin, stdout, stderr)
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, usage)
		return ExitOK
	}
	fmt.Fprintf(stderr, "strata: unknown command %q\n\n%s", args[0], usage)
	return ExitUsage
}

// files is a repeatable -f flag.
type files []string

func (f *files) String() string { return strings.Join(*f, ",") }

func (f *files) Set(v string) error {
	if v == "" {
		return errors.New("empty file name")
	}
	*f = append(*f, v)
	return nil
}

func runPlan(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("strata plan", flag.ContinueOnError)
	fl.SetOutput(stderr)
	var in files
	fl.Var(&in, "f", "a YAML file with the AnalyticsPipeline and the StorageTiers it names (repeatable; multi-document files are fine; - reads stdin)")
	output := fl.String("o", "table", "output format: table (an explanation) or json (exactly the status.plan object)")
	fl.Usage = func() {
		fmt.Fprint(stderr, `Usage: strata plan -f FILE [-f FILE ...] [-o table|json]

Reads one AnalyticsPipeline and the StorageTiers it names, validates and defaults them as the
API server would, and prints the plan the operator would write to status.plan.

`+inputHelp+`
Flags:
`)
		fl.PrintDefaults()
		fmt.Fprint(stderr, `
Exit status: 0 with a plan (even one that names a bottleneck), 1 on invalid input,
2 on a bad command line.
`)
	}
	if code, done := parseCommand("plan", fl, args, &in, output, stderr); done {
		return code
	}

	input, err := load(ctx, in, stdin, noteTo(stderr, "plan"))
	if err != nil {
		fmt.Fprintf(stderr, "strata plan: %v\n", err)
		return ExitError
	}
	p, ok := computePlan("plan", input, stderr)
	if !ok {
		return ExitError
	}

	if *output == "json" {
		if err := printJSON(stdout, p); err != nil {
			fmt.Fprintf(stderr, "strata plan: %v\n", err)
			return ExitError
		}
		return ExitOK
	}
	if err := writeTable(stdout, plan.Defaults(input.pipeline), input.tiers, p); err != nil {
		fmt.Fprintf(stderr, "strata plan: %v\n", err)
		return ExitError
	}
	return ExitOK
}

// computePlan plans the input as the operator plans a pipeline that runs nothing yet, and on
// failure says why on stderr (with a hint for a missing tier) and returns false.
func computePlan(name string, input *input, stderr io.Writer) (v1alpha1.Plan, bool) {
	p, err := plan.Fresh(input.pipeline, input.tiers)
	if err != nil {
		fmt.Fprintf(stderr, "strata %s: %s: %v\n", name, input.pipelineSource, err)
		var missing *plan.MissingTierError
		if errors.As(err, &missing) {
			fmt.Fprintf(stderr, "hint: pass the StorageTier %q with another -f, e.g. -f tiers.yaml\n", missing.Tier)
		}
		return v1alpha1.Plan{}, false
	}
	return p, true
}
