package autoscale

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestPure: the deciding package imports nothing that reaches a network or Prometheus, and
// registers nothing at import. Reading the metrics belongs to internal/autoscale/prometheus;
// a later edit that puts an HTTP client or a metric here would make Recommend something the
// simulator and the fuzzer could no longer run offline.
func TestPure(t *testing.T) {
	forbidden := []string{"net", "net/", "github.com/prometheus/", "sigs.k8s.io/controller-runtime",
		"k8s.io/client-go", "os/exec"}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, src, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		checked++
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			for _, bad := range forbidden {
				if path == bad || (strings.HasSuffix(bad, "/") && strings.HasPrefix(path, bad)) ||
					strings.HasPrefix(path, bad+"/") {
					t.Errorf("%s imports %s: the deciding package stays pure (see doc.go)", name, path)
					break
				}
			}
		}
		if strings.Contains(string(src), "\nfunc init()") {
			t.Errorf("%s has an init function: the package registers nothing at import", name)
		}
	}
	if checked < 5 {
		t.Fatalf("checked %d files: the test no longer finds the package's sources", checked)
	}
}
