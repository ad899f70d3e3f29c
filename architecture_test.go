package strata_test

// docs/architecture.md's tables of packages, controllers and reconcile steps are generated from
// the code by the tests below (testutil.DocBlock): `go test -run Architecture . -update`
// rewrites them, and a test run fails when the code and the document disagree. README.md's
// layout is checked to name every top-level directory and every internal package.

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/strata-dev/strata/internal/testutil"
)

const module = "github.com/strata-dev/strata"

// goPackage is one package of the module as `go list` sees it.
type goPackage struct {
	dir      string // relative to the repository root; "." for the root
	doc      string // the package comment's first sentence
	testOnly bool   // only _test.go files
}

var listPackages = sync.OnceValues(func() ([]byte, error) {
	return exec.Command("go", "list", "-f", "{{.ImportPath}}\t{{len .GoFiles}}\t{{.Doc}}", "./...").Output()
})

// goPackages lists the module's packages with `go list ./...`, the build's own view.
func goPackages(t *testing.T) []goPackage {
	t.Helper()
	out, err := listPackages()
	if err != nil {
		t.Fatalf("go list ./...: %v", err)
	}
	var pkgs []goPackage
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.SplitN(line, "\t", 3)
		dir := strings.TrimPrefix(strings.TrimPrefix(f[0], module), "/")
		if dir == "" {
			dir = "."
		}
		pkgs = append(pkgs, goPackage{dir: dir, doc: f[2], testOnly: f[1] == "0"})
	}
	return pkgs
}

// TestArchitecturePackages: docs/architecture.md lists every package with its doc comment's
// first sentence.
func TestArchitecturePackages(t *testing.T) {
	var b strings.Builder
	b.WriteString("| package | what (its package comment) |\n|---|---|\n")
	for _, p := range goPackages(t) {
		doc := p.doc
		if doc == "" && p.testOnly {
			doc = "tests only: " + testOnlyPackages[p.dir]
		}
		if doc == "" {
			t.Errorf("%s has no package comment: add a doc.go", p.dir)
		}
		fmt.Fprintf(&b, "| `%s` | %s |\n", p.dir, strings.ReplaceAll(doc, "|", `\|`))
	}
	testutil.DocBlock(t, "docs/architecture.md", "TestArchitecturePackages", b.String())
}

// testOnlyPackages says what the packages made of tests only check: they have no package
// comment to take it from.
var testOnlyPackages = map[string]string{
	".":      "the documentation's links, the image build, the API example and these tables",
	"charts": "the Helm chart (lint, template, schema, install into a control plane)",
	"e2e":    "the end-to-end suite on kind (build tag e2e) and its inputs",
}

// controllerName matches a controller's registration: ctrl.NewControllerManagedBy(mgr).Named("x").
var controllerName = regexp.MustCompile(`\bNamed\("([a-z]+)"\)`)

// TestArchitectureControllers: docs/architecture.md lists every controller the manager runs,
// with the file that registers it and the type it reconciles.
func TestArchitectureControllers(t *testing.T) {
	// Each controller has a package of its own under controllers/ (Cluster API's layout).
	files, err := filepath.Glob("controllers/*/*.go")
	if err != nil {
		t.Fatal(err)
	}
	forType := regexp.MustCompile(`\bFor\(&([a-z0-9]+\.[A-Za-z]+)\{\}`)
	var rows []string
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range controllerName.FindAllStringSubmatch(string(src), -1) {
			kind := "?"
			if k := forType.FindStringSubmatch(string(src)); k != nil {
				kind = k[1]
			}
			rows = append(rows, fmt.Sprintf("| `%s` | `%s` | `%s` |\n", m[1], f, kind))
		}
	}
	sort.Strings(rows)
	if len(rows) < 3 {
		t.Fatalf("found %d controllers in controllers/, want the pipeline, tier and autoscaling ones", len(rows))
	}
	got := "| controller | registered in | reconciles |\n|---|---|---|\n" + strings.Join(rows, "")
	testutil.DocBlock(t, "docs/architecture.md", "TestArchitectureControllers", got)
}

// TestArchitectureReconcileSteps: docs/architecture.md's table of the pipeline reconcile's
// steps is the step list of the pipeline Reconciler's Reconcile (controllers/pipeline), in its order, with each step's comment
// there and the file that defines it.
func TestArchitectureReconcileSteps(t *testing.T) {
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, "controllers/pipeline", func(fi os.FileInfo) bool {
		return !strings.HasSuffix(fi.Name(), "_test.go")
	}, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	methods := map[string]string{} // Reconciler's method → its file
	var steps *ast.CompositeLit
	var stepsFile *ast.File
	for _, pkg := range pkgs {
		for name, f := range pkg.Files {
			for _, d := range f.Decls {
				fn, ok := d.(*ast.FuncDecl)
				if !ok || fn.Recv == nil || len(fn.Recv.List) != 1 {
					continue
				}
				if star, ok := fn.Recv.List[0].Type.(*ast.StarExpr); !ok || fmt.Sprint(star.X) != "Reconciler" {
					continue
				}
				methods[fn.Name.Name] = filepath.ToSlash(name)
				if fn.Name.Name != "Reconcile" {
					continue
				}
				ast.Inspect(fn.Body, func(n ast.Node) bool {
					if r, ok := n.(*ast.RangeStmt); ok {
						if lit, ok := r.X.(*ast.CompositeLit); ok {
							steps, stepsFile = lit, f
						}
					}
					return true
				})
			}
		}
	}
	if steps == nil {
		t.Fatal("the pipeline Reconciler's Reconcile has no range over a step list")
	}
	comments := map[int]string{} // line → the line comment on it
	for _, cg := range stepsFile.Comments {
		for _, c := range cg.List {
			comments[fset.Position(c.Pos()).Line] = strings.TrimSpace(strings.TrimPrefix(c.Text, "//"))
		}
	}
	var b strings.Builder
	b.WriteString("| # | step | defined in | what |\n|---|---|---|---|\n")
	for i, e := range steps.Elts {
		sel, ok := e.(*ast.SelectorExpr)
		if !ok {
			t.Fatalf("step %d is %T, want r.method", i+1, e)
		}
		name := sel.Sel.Name
		what := comments[fset.Position(e.Pos()).Line]
		if what == "" {
			t.Errorf("step %s has no comment on its line in Reconcile: say what it does", name)
		}
		fmt.Fprintf(&b, "| %d | `%s` | `%s` | %s |\n", i+1, name, methods[name], strings.ReplaceAll(what, "|", `\|`))
	}
	testutil.DocBlock(t, "docs/architecture.md", "TestArchitectureReconcileSteps", b.String())
}

// TestReadmeLayout: README.md's and docs/development.md's layouts name every top-level
// directory of the repository and every package under internal/, so that a new one is placed
// in them.
func TestReadmeLayout(t *testing.T) {
	for _, doc := range []string{"README.md", "docs/development.md"} {
		checkLayout(t, doc)
	}
}

func checkLayout(t *testing.T, doc string) {
	t.Helper()
	b, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	_, layout, ok := strings.Cut(string(b), "\n## Layout\n")
	if !ok {
		t.Fatalf("%s has no ## Layout section", doc)
	}
	layout, _, _ = strings.Cut(layout, "\n## ")
	want := map[string]bool{}
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() && !strings.HasPrefix(e.Name(), ".") && !skipDirs[e.Name()] {
			want[e.Name()+"/"] = true
		}
	}
	want["third_party/"] = true
	for _, p := range goPackages(t) {
		if rest, ok := strings.CutPrefix(p.dir, "internal/"); ok {
			first, _, _ := strings.Cut(rest, "/")
			want["internal/"+first] = true
		}
	}
	for name := range want {
		short := strings.TrimSuffix(name, "/")
		if !strings.Contains(layout, "`"+short) && !strings.Contains(layout, "`"+strings.TrimPrefix(short, "internal/")+"`") {
			t.Errorf("%s's layout does not name %s", doc, name)
		}
	}
}
