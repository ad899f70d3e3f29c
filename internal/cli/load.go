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

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/internal/schema"
)

// Reading the input: YAML files holding one AnalyticsPipeline and StorageTiers, each document
// admitted (validated and defaulted) exactly as the API server would before it is planned, so
// that what `strata plan` accepts is what `kubectl apply` accepts.

// input is what the files held.
type input struct {
	pipeline *v1alpha1.AnalyticsPipeline
	// pipelineSource says where the pipeline came from, for messages.
	pipelineSource string
	tiers          []v1alpha1.StorageTier
}

// document is one YAML document and where it came from.
type document struct {
	source string
	// file and index (from 1) say where the document is, for messages.
	file  string
	index int
	data  []byte
}

func load(ctx context.Context, names []string, stdin io.Reader) (*input, error) {
	admission, err := embeddedCRDs()
	if err != nil {
		return nil, fmt.Errorf("the embedded CRDs: %w", err)
	}
	docs, err := readDocuments(names, stdin)
	if err != nil {
		return nil, err
	}
	in := &input{}
	tierSources := map[string]string{}
	for _, d := range docs {
		if err := lintDocument(d); err != nil {
			return nil, err
		}
		obj, err := schema.DecodeYAML(d.data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", d.source, err)
		}
		if len(obj) == 0 {
			continue // an empty document, e.g. after a trailing ---
		}
		u := unstructured.Unstructured{Object: obj}
		gvk := u.GroupVersionKind()
		if !admission.Knows(gvk) {
			return nil, fmt.Errorf("%s: apiVersion %q kind %q is not a Strata object: want strata.dev/v1alpha1 AnalyticsPipeline or StorageTier",
				d.source, u.GetAPIVersion(), u.GetKind())
		}
		if err := admission.Admit(ctx, obj); err != nil {
			return nil, fmt.Errorf("%s: %s", d.source, explain(err))
		}
		switch gvk.Kind {
		case "AnalyticsPipeline":
			if in.pipeline != nil {
				return nil, fmt.Errorf("%s: a second AnalyticsPipeline (%q; the first is %q in %s): plan one pipeline at a time",
					d.source, u.GetName(), in.pipeline.Name, in.pipelineSource)
			}
			in.pipeline = &v1alpha1.AnalyticsPipeline{}
			if err := decodeStrict(obj, in.pipeline); err != nil {
				return nil, fmt.Errorf("%s: %w", d.source, err)
			}
			in.pipelineSource = d.source
			if err := checkQueries(in.pipeline); err != nil {
				return nil, fmt.Errorf("%s: %w", d.source, err)
			}
		case "StorageTier":
			var t v1alpha1.StorageTier
			if err := decodeStrict(obj, &t); err != nil {
				return nil, fmt.Errorf("%s: %w", d.source, err)
			}
			if first, ok := tierSources[t.Name]; ok {
				return nil, fmt.Errorf("%s: StorageTier %q is also defined in %s", d.source, t.Name, first)
			}
			tierSources[t.Name] = d.source
			in.tiers = append(in.tiers, t)
		}
	}
	if in.pipeline == nil {
		return nil, fmt.Errorf("no AnalyticsPipeline in %s", strings.Join(displayNames(names), ", "))
	}
	return in, nil
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
