package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	yamlv3 "go.yaml.in/yaml/v3"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/internal/schema"
)

// Reading the input: YAML files holding one AnalyticsPipeline and StorageTiers, each object
// admitted (validated and defaulted) exactly as the API server would before it is planned, so
// that what `strata plan` accepts is what `kubectl apply` accepts. A v1 List (what `kubectl get
// -o yaml` writes) counts as its items; objects of other kinds (a Namespace, a ConfigMap kept
// in the same file) are skipped with a note, so that a directory applied with `kubectl apply
// -f` can be planned as it is.

// input is what the files held.
type input struct {
	pipeline *v1alpha1.AnalyticsPipeline
	// pipelineSource says where the pipeline came from, for messages.
	pipelineSource string
	tiers          []v1alpha1.StorageTier
	// tierSources says where each tier came from, by name, to name both places of a duplicate.
	tierSources map[string]string
}

// document is one YAML document and where it came from.
type document struct {
	source string
	// file and index (from 1) say where the document is, for messages.
	file  string
	index int
	data  []byte
}

// load reads, admits and decodes the files. note receives a line for every object that is
// skipped because it is not Strata's (nil: the notes are dropped).
func load(ctx context.Context, names []string, stdin io.Reader, note func(string)) (*input, error) {
	admission, err := embeddedCRDs()
	if err != nil {
		return nil, fmt.Errorf("the embedded CRDs: %w", err)
	}
	docs, err := readDocuments(names, stdin)
	if err != nil {
		return nil, err
	}
	if note == nil {
		note = func(string) {}
	}
	in := &input{tierSources: map[string]string{}}
	for _, d := range docs {
		top, err := parseDocument(d)
		if err != nil {
			return nil, err
		}
		if top == nil {
			continue // an empty document, e.g. after a trailing ---
		}
		objs, err := expand(d, top)
		if err != nil {
			return nil, err
		}
		for _, o := range objs {
			if skip, name := foreign(o.node); skip {
				note(fmt.Sprintf("%s: skipped %s: not a Strata object", o.source, name))
				continue
			}
			if err := in.add(ctx, admission, o); err != nil {
				return nil, err
			}
		}
	}
	if in.pipeline == nil {
		return nil, fmt.Errorf("no AnalyticsPipeline in %s", strings.Join(displayNames(names), ", "))
	}
	return in, nil
}

// add lints, admits and decodes one object that is (or claims to be) Strata's.
func (in *input) add(ctx context.Context, admission *schema.Admission, o object) error {
	if err := lintNode(o.source, "", o.node); err != nil {
		return err
	}
	obj, err := schema.DecodeYAML(o.data)
	if err != nil {
		return fmt.Errorf("%s: %w", o.source, err)
	}
	if len(obj) == 0 {
		return nil // an empty mapping
	}
	u := unstructured.Unstructured{Object: obj}
	gvk := u.GroupVersionKind()
	if !admission.Knows(gvk) {
		return fmt.Errorf("%s: apiVersion %q kind %q is not a Strata object: want strata.dev/v1alpha1 AnalyticsPipeline or StorageTier",
			o.source, u.GetAPIVersion(), u.GetKind())
	}
	if err := admission.Admit(ctx, obj); err != nil {
		return fmt.Errorf("%s: %s", o.source, explain(err))
	}
	switch gvk.Kind {
	case "AnalyticsPipeline":
		if in.pipeline != nil {
			return fmt.Errorf("%s: a second AnalyticsPipeline (%q; the first is %q in %s): plan one pipeline at a time",
				o.source, u.GetName(), in.pipeline.Name, in.pipelineSource)
		}
		in.pipeline = &v1alpha1.AnalyticsPipeline{}
		if err := decodeStrict(obj, in.pipeline); err != nil {
			return fmt.Errorf("%s: %w", o.source, err)
		}
		in.pipelineSource = o.source
		if err := checkQueries(in.pipeline); err != nil {
			return fmt.Errorf("%s: %w", o.source, err)
		}
	case "StorageTier":
		var t v1alpha1.StorageTier
		if err := decodeStrict(obj, &t); err != nil {
			return fmt.Errorf("%s: %w", o.source, err)
		}
		if first, ok := in.tierSources[t.Name]; ok {
			return fmt.Errorf("%s: StorageTier %q is also defined in %s", o.source, t.Name, first)
		}
		in.tierSources[t.Name] = o.source
		in.tiers = append(in.tiers, t)
	}
	return nil
}

// object is one object of the input: a document, or an item of a List document.
type object struct {
	// source says where it is, for messages: the file, and the document and item when there
	// are several.
	source string
	node   *yamlv3.Node // the mapping, for the checks on scalars and for foreign
	data   []byte       // its YAML, to decode
}

// expand returns the objects of a document: the document itself, or the items of a v1 List,
// which is what `kubectl get -o yaml` writes for more than one object (and for one, with
// `kubectl get KIND -o yaml`). An item's source names the file, the document and the item
// (both counted from 1, as documents are), whatever the file holds besides.
func expand(d document, top *yamlv3.Node) ([]object, error) {
	if scalar(top, "apiVersion") != "v1" || scalar(top, "kind") != "List" {
		return []object{{source: d.source, node: top, data: d.data}}, nil
	}
	items := value(top, "items")
	if items == nil || items.Kind == yamlv3.ScalarNode && items.Tag == "!!null" {
		return nil, nil // an empty List: kubectl writes items: []
	}
	if items.Kind != yamlv3.SequenceNode {
		return nil, fmt.Errorf("%s: items of a v1 List must be a list, found %s", d.source, describe(items))
	}
	objs := make([]object, 0, len(items.Content))
	for i, item := range items.Content {
		source := fmt.Sprintf("%s (document %d, item %d)", d.file, d.index, i+1)
		if item.Kind == yamlv3.AliasNode {
			item = item.Alias // an item written as *anchor (the parser refuses undefined ones)
		}
		if item.Kind == yamlv3.ScalarNode && item.Tag == "!!null" {
			continue
		}
		if item.Kind != yamlv3.MappingNode {
			return nil, fmt.Errorf("expected a mapping (an AnalyticsPipeline or StorageTier object) at item %d of document %d of %s, found %s",
				i+1, d.index, d.file, describe(item))
		}
		if scalar(item, "apiVersion") == "v1" && scalar(item, "kind") == "List" {
			// kubectl never nests Lists; refusing one beats skipping the pipelines inside.
			return nil, fmt.Errorf("%s: a List inside a List: put its items in the outer List", source)
		}
		// The item is decoded on its own, from its own YAML: a skipped item beside it may hold
		// what does not decode (a NaN in a ConfigMap), and its errors name this item.
		if anchor := outsideAlias(item); anchor != "" {
			return nil, fmt.Errorf("%s: the alias *%s refers to an anchor outside the item: List items are read one at a time, so write the value out", source, anchor)
		}
		data, err := yamlv3.Marshal(item)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", source, err)
		}
		objs = append(objs, object{source: source, node: item, data: data})
	}
	return objs, nil
}

// outsideAlias returns the name of an alias in n whose anchor is not in n ("" when none is):
// re-encoded alone, n would not parse.
func outsideAlias(n *yamlv3.Node) string {
	inside := map[*yamlv3.Node]bool{}
	var aliases []*yamlv3.Node
	var walk func(*yamlv3.Node)
	walk = func(n *yamlv3.Node) {
		inside[n] = true
		if n.Kind == yamlv3.AliasNode {
			aliases = append(aliases, n)
			return
		}
		for _, c := range n.Content {
			walk(c)
		}
	}
	walk(n)
	for _, a := range aliases {
		if !inside[a.Alias] {
			return a.Value
		}
	}
	return ""
}

// strataGroup is the API group of Strata's kinds.
const strataGroup = "strata.dev"

// foreign says whether an object is someone else's — a Namespace, a ConfigMap, a Secret kept in
// the same file as the pipeline — and so is skipped, and names it (kind/name) for the note.
// Only an object with an apiVersion and a kind is foreign: one without either may be a
// pipeline that lost its header. Anything in the strata.dev group (or a subgroup), or of a
// Strata kind in another group, is not foreign: an unknown kind or version there is a typo
// to refuse, naming it, not to skip.
func foreign(n *yamlv3.Node) (bool, string) {
	apiVersion, kind := scalar(n, "apiVersion"), scalar(n, "kind")
	if apiVersion == "" || kind == "" || kind == "AnalyticsPipeline" || kind == "StorageTier" {
		return false, ""
	}
	group, _, _ := strings.Cut(apiVersion, "/")
	if group == strataGroup || strings.HasSuffix(group, "."+strataGroup) {
		return false, ""
	}
	name := kind + "/" + scalar(value(n, "metadata"), "name")
	return true, fmt.Sprintf("%s (apiVersion %s)", name, apiVersion)
}

// value returns the value of key in mapping m (nil when m is not a mapping or has no key).
func value(m *yamlv3.Node, key string) *yamlv3.Node {
	if m == nil || m.Kind != yamlv3.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// scalar returns the string value of key in mapping m ("" when absent or not a scalar).
func scalar(m *yamlv3.Node, key string) string {
	v := value(m, key)
	if v == nil || v.Kind != yamlv3.ScalarNode {
		return ""
	}
	return v.Value
}

// embeddedCRDs compiles the embedded CRDs once per process (a fuzzer calls load many times).
var embeddedCRDs = sync.OnceValues(schema.New)

// readDocuments splits every file into its YAML documents. "-" is stdin, which can be read once.
func readDocuments(names []string, stdin io.Reader) ([]document, error) {
	var docs []document
	usedStdin := false
	for _, name := range names {
		var data []byte
		var err error
		source := name
		if name == "-" {
			if usedStdin {
				return nil, errors.New("-f - (stdin) given twice")
			}
			usedStdin = true
			source = "<stdin>"
			data, err = readInput(source, stdin)
		} else {
			data, err = readFile(name)
		}
		if err != nil {
			return nil, err
		}
		if err := checkEncoding(source, data); err != nil {
			return nil, err
		}
		r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
		var parts [][]byte
		for {
			part, err := r.Read()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return nil, fmt.Errorf("%s: %w", source, err)
			}
			parts = append(parts, part)
		}
		for i, part := range parts {
			s := source
			if len(parts) > 1 {
				s = fmt.Sprintf("%s (document %d)", source, i+1)
			}
			docs = append(docs, document{source: s, file: source, index: i + 1, data: part})
		}
	}
	return docs, nil
}

// decodeStrict converts an admitted object into its Go type, refusing anything the type does
// not know (admission already pruned unknown fields, so this guards against the two drifting).
func decodeStrict(obj map[string]any, into any) error {
	raw, err := json.Marshal(obj)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	return dec.Decode(into)
}

// explain formats an admission error: the API server's message, with one field per line when
// there are several.
func explain(err error) string {
	var invalid *schema.InvalidError
	if !errors.As(err, &invalid) || len(invalid.Errors) < 2 {
		return err.Error()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s.%s %q is invalid:", invalid.GroupKind.Kind, invalid.GroupKind.Group, invalid.Name)
	for _, e := range invalid.Errors {
		fmt.Fprintf(&b, "\n  - %s", e.Error())
	}
	return b.String()
}

// displayNames names stdin as messages do.
func displayNames(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = n
		if n == "-" {
			out[i] = "<stdin>"
		}
	}
	return out
}
