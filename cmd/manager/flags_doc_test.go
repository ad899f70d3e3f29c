package main

import (
	"flag"
	"fmt"
	"strings"
	"testing"

	"github.com/strata-dev/strata/internal/testutil"
)

// TestFlagsDocumented: docs/architecture.md's table of the manager's flags is generated from
// options.bind (`go test ./cmd/manager -run TestFlagsDocumented -update` rewrites it), so a new
// flag, a changed default or a reworded help shows in the document.
func TestFlagsDocumented(t *testing.T) {
	fs := flag.NewFlagSet("manager", flag.ContinueOnError)
	var o options
	o.bind(fs)
	var b strings.Builder
	b.WriteString("| flag | default | what |\n|---|---|---|\n")
	fs.VisitAll(func(f *flag.Flag) {
		def := f.DefValue
		if def == "" || def == "[]" {
			def = "—"
		} else {
			def = "`" + def + "`"
		}
		fmt.Fprintf(&b, "| `--%s` | %s | %s |\n", f.Name, def, strings.ReplaceAll(f.Usage, "|", `\|`))
	})
	testutil.DocBlock(t, "../../docs/architecture.md", "TestFlagsDocumented", b.String())
}
