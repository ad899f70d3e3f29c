package cli

import (
	"context"
	"flag"
	"fmt"
	"io"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/strata-dev/strata/internal/desired"
)

// `strata render` is to a pipeline what `helm template` is to a chart: the objects the operator
// would apply for it, printed offline, for review and for GitOps diffs. It builds them with the
// operator's own code — the input admitted as `strata plan` admits it, the plan from the same
// plan.Compute, the objects from desired.All, which the controller's buildDesired step calls —
// so that what it prints cannot drift from what the operator applies.
//
// The controller fills desired.Inputs from the cluster too. What render cannot know, it leaves
// out rather than invents (renderUsage lists it, docs/children.md too):
//   - ownerReferences name the pipeline's UID, which exists only once the API server stored the
//     pipeline: they are removed from every object (the builders set them with an empty UID);
//   - ElasticsearchPassword is read from the live Secret or generated once: empty, so the user
//     Secret has no password key, as in a dry run;
//   - EmptyBrokers and what runs (the KRaft quorum, the topic's partitions, brokers leaving one
//     at a time, the autoscaler's targets): render plans with plan.Compute, a first apply;
//   - the kinds the cluster serves: the controller skips children whose CRD is missing, render
//     prints every one.
// IngestImage is the manager's --ingest-image, not cluster state: --ingest-image sets it.

const renderUsage = `Usage: strata render -f FILE [-f FILE ...] [-o yaml|json] [-n NS] [--ingest-image IMAGE]

Prints the objects the operator would apply for one AnalyticsPipeline: the Kafka cluster, its
node pools, topic and user, the Elasticsearch cluster and its Secrets, the SparkApplication and
the rest (docs/children.md). They are built by the operator's own code from the plan 'strata
plan' prints, for review and GitOps diffs; nothing is read from a cluster.

Objects come in the order the operator applies them (ConfigMap and node pools before the Kafka,
Elasticsearch before the SparkApplication ...). -o yaml (the default) prints one YAML document
per object, each starting with ---; -o json prints one v1 List.

` + inputHelp + `
Left out, because only the cluster knows it:
  - ownerReferences: they name the pipeline's UID. The operator adds them: the pipeline is
    the controller of every object, which goes when the pipeline goes.
  - the password in <name>-ingest-es-user: the operator generates it once, or keeps the
    one the Secret already has (and, for a job of the user's, the store in
    <name>-ingest-es-keystore that holds it).
  - what already runs: render shows a first apply. On a running pipeline the operator keeps
    the KRaft quorum the cluster was created with, never lowers the topic's partitions, lowers
    brokers one at a time (going from two to one, it first empties a broker with a
    remove-brokers KafkaRebalance), and with spec.autoscaling.enabled applies the autoscaler's
    targets instead of the spec's.
  - kinds whose CRDs the cluster lacks: the operator skips them; render prints them all.
The operator applies each object server-side as field manager "strata": applying this output
as that field manager would drop the owner references and the password.

Flags:
`

func runRender(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("strata render", flag.ContinueOnError)
	fl.SetOutput(stderr)
	var in files
	fl.Var(&in, "f", "a YAML file with the AnalyticsPipeline and the StorageTiers it names (repeatable; - reads stdin)")
	output := fl.String("o", "yaml", "output format: yaml (a document per object) or json (a v1 List)")
	var namespace string
	fl.StringVar(&namespace, "n", "", "shorthand for --namespace")
	fl.StringVar(&namespace, "namespace", "", "the namespace the pipeline runs in (default: its metadata.namespace, else default)")
	ingestImage := fl.String("ingest-image", desired.DefaultIngestImage,
		"Strata's job image, for a pipeline whose spec.spark names none: the operator's --ingest-image (the chart's ingestJob.image)")
	fl.Usage = func() {
		fmt.Fprint(stderr, renderUsage)
		fl.PrintDefaults()
		fmt.Fprint(stderr, `
Exit status: 0 with the objects, 1 on invalid input or a pipeline that cannot be planned,
2 on a bad command line.
`)
	}
	if code, done := parseCommand("render", fl, args, &in, output, stderr, "yaml", "json"); done {
		return code
	}
	fail := func(err error) int {
		fmt.Fprintf(stderr, "strata render: %v\n", err)
		return ExitError
	}

	input, err := load(ctx, in, stdin, noteTo(stderr, "render"))
	if err != nil {
		return fail(err)
	}
	p := input.pipeline
	if namespace != "" {
		p.Namespace = namespace
	}
	planned, ok := computePlan("render", input, stderr)
	if !ok {
		return ExitError
	}
	if sa := p.Spec.Spark.ServiceAccountName; sa != "" {
		// The controller refuses to plan such a pipeline unless its installer allowed it
		// (controllers: planStep): say so rather than print objects it would not apply.
		noteTo(stderr, "render")(fmt.Sprintf("%s: spec.spark.serviceAccountName (%q): the operator applies these objects only if installed with spark.allowUserServiceAccounts=true (--allow-user-service-accounts)",
			input.pipelineSource, sa))
	}
	objs := render(desired.Inputs{Pipeline: p, Plan: planned, IngestImage: *ingestImage, Tiers: input.tiers})

	if *output == "json" {
		if err := printJSON(stdout, objectList{APIVersion: "v1", Kind: "List", Items: contents(objs)}); err != nil {
			return fail(err)
		}
		return ExitOK
	}
	if err := writeYAMLStream(stdout, objs); err != nil {
		return fail(err)
	}
	return ExitOK
}

// render builds the objects as the controller does, in its order (desired.All's: the order to
// apply them), and removes what only a stored pipeline has: the owner references, whose UID
// is empty here.
func render(in desired.Inputs) []*unstructured.Unstructured {
	objs := desired.All(in)
	for _, o := range objs {
		unstructured.RemoveNestedField(o.Object, "metadata", "ownerReferences")
	}
	return objs
}

// objectList is -o json: a v1 List, as `kubectl get -o json` writes several objects, so that
// kubectl and jq read it as they read theirs (and `strata plan` reads it back).
type objectList struct {
	APIVersion string           `json:"apiVersion"`
	Kind       string           `json:"kind"`
	Items      []map[string]any `json:"items"`
}

func contents(objs []*unstructured.Unstructured) []map[string]any {
	out := make([]map[string]any, len(objs))
	for i, o := range objs {
		out[i] = o.Object
	}
	return out
}

// writeYAMLStream writes each object as a YAML document starting with ---. sigs.k8s.io/yaml
// goes through JSON, so keys are sorted (as kubectl writes them) and the bytes are the same for
// the same objects: a diff shows only what changed.
func writeYAMLStream(w io.Writer, objs []*unstructured.Unstructured) error {
	for _, o := range objs {
		b, err := yaml.Marshal(o.Object)
		if err != nil {
			return fmt.Errorf("%s %s: %w", o.GetKind(), o.GetName(), err)
		}
		if _, err := fmt.Fprintf(w, "---\n%s", b); err != nil {
			return err
		}
	}
	return nil
}
