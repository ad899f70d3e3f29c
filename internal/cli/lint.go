package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	yamlv3 "go.yaml.in/yaml/v3"

	"github.com/strata-dev/strata/api/v1alpha1"
	autoscaleprom "github.com/strata-dev/strata/internal/autoscale/prometheus"
)

// Checks on the raw input before it is decoded, for the inputs whose decoding errors say
// nothing useful ("json: unsupported value: NaN", "cannot unmarshal ... map", "could not find
// expected ':'") or that decode to something other than what was written.

// MaxInputBytes is the most the CLI reads from one file or stdin: the API server's limit on a
// request body (k8s.io/apiserver pkg/server/config.go, NewConfig: MaxRequestBodyBytes
// 3 * 1024 * 1024, kube-apiserver's --max-request-bytes default), so nothing the CLI accepts
// could not be sent, and `-f /dev/zero` fails at once instead of exhausting memory.
const MaxInputBytes = 3 << 20

// readInput reads at most MaxInputBytes from r, refusing more before anything is parsed.
func readInput(source string, r io.Reader) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxInputBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", source, err)
	}
	if len(data) > MaxInputBytes {
		return nil, fmt.Errorf("%s: more than 3 MiB, the API server's limit on a request (kube-apiserver --max-request-bytes): no pipeline or tier is that large", source)
	}
	return data, nil
}

// readFile opens name and reads it with readInput (so a device or a pipe is limited too).
func readFile(name string) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readInput(name, f)
}

// checkEncoding refuses input that is not UTF-8 (YAML files are UTF-8 for kubectl; a UTF-16
// file from an editor decodes to garbage).
func checkEncoding(source string, data []byte) error {
	switch {
	case bytes.HasPrefix(data, []byte{0xFE, 0xFF}), bytes.HasPrefix(data, []byte{0xFF, 0xFE}),
		bytes.IndexByte(data, 0) >= 0 && len(data) > 1:
		return fmt.Errorf("%s: the file is UTF-16 or binary (it holds NUL bytes): save it as UTF-8", source)
	case !utf8.Valid(data):
		return fmt.Errorf("%s: the file is not valid UTF-8: save it as UTF-8", source)
	}
	return nil
}

var (
	// leadingZero is an integer YAML 1.1 reads as octal (010000 = 4096) or, with an 8 or 9, as
	// a float: kubectl and the API server's YAML reader (sigs.k8s.io/yaml, YAML 1.1) both do.
	leadingZero = regexp.MustCompile(`^[-+]?0[0-9_]+$`)
	// notANumber are YAML's special floats, which JSON (and so the API server) cannot carry.
	notANumber = regexp.MustCompile(`^[-+]?\.(?:inf|Inf|INF)$|^\.(?:nan|NaN|NAN)$`)
)

// maxKeyLength is YAML's limit on an implicit (plain) key.
const maxKeyLength = 1024

// parseDocument parses one YAML document and checks that it is a mapping; it returns the
// mapping (nil for an empty document). Its scalars are checked by lintNode once the document
// (or, for a List, each item) is known to be Strata's: a ConfigMap skipped beside the pipeline
// may hold what a Strata field may not.
func parseDocument(d document) (*yamlv3.Node, error) {
	source, doc := d.source, d.data
	var root yamlv3.Node
	if err := yamlv3.Unmarshal(doc, &root); err != nil {
		return nil, explainSyntax(source, doc, err)
	}
	if root.Kind == 0 || len(root.Content) == 0 {
		return nil, nil // empty document
	}
	top := root.Content[0]
	if top.Kind == yamlv3.ScalarNode && top.Tag == "!!null" {
		return nil, nil
	}
	if top.Kind != yamlv3.MappingNode {
		return nil, fmt.Errorf("expected a mapping (an AnalyticsPipeline or StorageTier object) at document %d of %s, found %s",
			d.index, d.file, describe(top))
	}
	return top, nil
}

func describe(n *yamlv3.Node) string {
	switch n.Kind {
	case yamlv3.SequenceNode:
		return "a list"
	case yamlv3.ScalarNode:
		return fmt.Sprintf("the scalar %q", truncate(n.Value, 40))
	case yamlv3.AliasNode:
		return "an alias"
	}
	return "something else"
}

func lintNode(source, path string, n *yamlv3.Node) error {
	switch n.Kind {
	case yamlv3.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			key, value := n.Content[i], n.Content[i+1]
			if len(key.Value) > maxKeyLength {
				return fmt.Errorf("%s: line %d: a key of %d characters under %q: no Strata field is that long", source, key.Line, len(key.Value), orTop(path))
			}
			child := key.Value
			if path != "" {
				child = path + "." + key.Value
			}
			if err := lintNode(source, child, value); err != nil {
				return err
			}
		}
	case yamlv3.SequenceNode:
		for i, c := range n.Content {
			if err := lintNode(source, path+"["+strconv.Itoa(i)+"]", c); err != nil {
				return err
			}
		}
	case yamlv3.ScalarNode:
		if n.Style != 0 {
			return nil // quoted or block: a string, read as written
		}
		switch {
		case leadingZero.MatchString(n.Value):
			return fmt.Errorf("%s: %s: %s has a leading zero, which kubectl's YAML 1.1 reader takes as an octal number (010000 is 4096): write it without the leading zero, or quote it if it is a string",
				source, orTop(path), n.Value)
		case notANumber.MatchString(n.Value):
			return fmt.Errorf("%s: %s: %s is not a number the API server can store (JSON has no NaN or infinity)", source, orTop(path), n.Value)
		}
	}
	return nil
}

func orTop(path string) string {
	if path == "" {
		return "the top level"
	}
	return path
}

// lineError finds "line N" in a YAML parser's message.
var lineError = regexp.MustCompile(`line (\d+):`)

// explainSyntax turns a YAML syntax error into a message naming the line, and says so when the
// cause is a key longer than YAML allows (the parser says only "could not find expected ':'").
func explainSyntax(source string, doc []byte, err error) error {
	lines := strings.Split(string(doc), "\n")
	for i, l := range lines {
		if len(l) <= maxKeyLength {
			continue
		}
		key, _, found := strings.Cut(l, ":")
		if !found || len(strings.TrimSpace(key)) > maxKeyLength {
			return fmt.Errorf("%s: line %d: a key longer than %d characters (YAML's limit for a key; no Strata field is that long)", source, i+1, maxKeyLength)
		}
	}
	var te *yamlv3.TypeError
	if errors.As(err, &te) {
		return fmt.Errorf("%s: %s", source, strings.Join(te.Errors, "; "))
	}
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	if m := lineError.FindStringSubmatch(msg); m != nil {
		return fmt.Errorf("%s: YAML syntax error at %s", source, msg)
	}
	return fmt.Errorf("%s: YAML syntax error: %s", source, msg)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// checkQueries parses the pipeline's PromQL overrides offline with the operator's own function,
// so that `strata plan` refuses a query the operator would stop on (reason InvalidQuery).
func checkQueries(p *v1alpha1.AnalyticsPipeline) error {
	if p.Spec.Autoscaling == nil || p.Spec.Autoscaling.Queries == nil {
		return nil
	}
	_, err := autoscaleprom.Queries(p)
	return err
}
