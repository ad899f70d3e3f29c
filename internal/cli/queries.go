package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/strata-dev/strata/internal/alerts"
	"github.com/strata-dev/strata/internal/autoscale"
	autoscaleprom "github.com/strata-dev/strata/internal/autoscale/prometheus"
)

// `strata queries` prints the PromQL the operator and Prometheus run for one pipeline, filled in
// the way the operator fills it: the autoscaler's query per signal (the spec's override or the
// default), a probe per upstream source (what StrataPipelineMetricsUnavailable checks), and
// each pipeline alert limited to the pipeline. Pasted into Prometheus' console they show which
// source has no data, which is how a "MetricsUnavailable" or a stuck autoscaler is debugged.

// queryList is the -o json output.
type queryList struct {
	Namespace  string       `json:"namespace"`
	Pipeline   string       `json:"pipeline"`
	Autoscaler []namedQuery `json:"autoscaler"`
	Sources    []namedQuery `json:"sources"`
	Alerts     []namedQuery `json:"alerts"`
}

type namedQuery struct {
	Name string `json:"name"`
	// Field is the spec field that overrides an autoscaler query.
	Field string `json:"field,omitempty"`
	Query string `json:"query"`
}

func runQueries(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("strata queries", flag.ContinueOnError)
	fl.SetOutput(stderr)
	var in files
	fl.Var(&in, "f", "a YAML file with the AnalyticsPipeline (and, optionally, the StorageTiers it names; repeatable; - reads stdin)")
	output := fl.String("o", "table", "output format: table or json")
	var namespace string
	fl.StringVar(&namespace, "n", "", "shorthand for --namespace")
	fl.StringVar(&namespace, "namespace", "", "the namespace the pipeline runs in (default: its metadata.namespace, else default)")
	fl.Usage = func() {
		fmt.Fprint(stderr, `Usage: strata queries -f FILE [-f FILE ...] [-o table|json] [-n NS]

Prints the PromQL run for one AnalyticsPipeline, filled in for it: the autoscaler's query per
signal, a probe per upstream source (StrataPipelineMetricsUnavailable names the source whose
probe is empty), and every pipeline alert limited to the pipeline.

`+inputHelp+`
Flags:
`)
		fl.PrintDefaults()
	}
	if code, done := parseCommand("queries", fl, args, &in, output, stderr); done {
		return code
	}
	input, err := load(ctx, in, stdin, noteTo(stderr, "queries"))
	if err != nil {
		fmt.Fprintf(stderr, "strata queries: %v\n", err)
		return ExitError
	}
	p := input.pipeline
	if namespace != "" {
		p.Namespace = namespace
	}
	qs, err := autoscaleprom.Queries(p)
	if err != nil {
		fmt.Fprintf(stderr, "strata queries: %s: %v\n", input.pipelineSource, err)
		return ExitError
	}
	list := queryList{Namespace: p.Namespace, Pipeline: p.Name}
	for _, s := range autoscale.Signals() {
		list.Autoscaler = append(list.Autoscaler, namedQuery{Name: string(s), Field: s.Field(), Query: qs[s]})
	}
	for _, src := range alerts.Sources() {
		list.Sources = append(list.Sources, namedQuery{Name: src.Name, Query: src.Probe(p.Namespace, p.Name)})
	}
	for _, a := range alerts.PipelineAlerts() {
		list.Alerts = append(list.Alerts, namedQuery{Name: a.Name, Query: alerts.ForPipeline(a.Expr, p.Namespace, p.Name)})
	}
	if *output == "json" {
		if err := printJSON(stdout, list); err != nil {
			fmt.Fprintf(stderr, "strata queries: %v\n", err)
			return ExitError
		}
		return ExitOK
	}
	if err := writeQueries(stdout, list); err != nil {
		fmt.Fprintf(stderr, "strata queries: %v\n", err)
		return ExitError
	}
	return ExitOK
}

func writeQueries(w io.Writer, l queryList) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "Pipeline %s/%s\n\n", l.Namespace, l.Pipeline)
	sections := []struct {
		title string
		qs    []namedQuery
	}{
		{"Autoscaler (override with the field named)", l.Autoscaler},
		{"Sources (an empty result is the source StrataPipelineMetricsUnavailable names)", l.Sources},
		{"Alerts (a result is the alert pending or firing for this pipeline)", l.Alerts},
	}
	for _, sec := range sections {
		fmt.Fprintf(tw, "%s:\n", sec.title)
		for _, q := range sec.qs {
			name := q.Name
			if q.Field != "" {
				name = q.Field
			}
			fmt.Fprintf(tw, "  %s\t%s\n", name, q.Query)
		}
		fmt.Fprintln(tw)
	}
	return tw.Flush()
}
