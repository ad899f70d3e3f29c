package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"path"
	"regexp"
	"sort"
	"strings"
	"time"
)

// event is one line of `go test -json` (cmd/test2json's TestEvent, and the go command's build
// events, which name the package in ImportPath).
type event struct {
	Action      string
	Package     string
	ImportPath  string
	Test        string
	Elapsed     float64
	Output      string
	FailedBuild string
}

// test is one test or subtest as the stream reported it.
type test struct {
	pkg, name string
	output    []string
	failed    bool
	elapsed   time.Duration
	order     int // when it ended, for a stable report
}

// report reads the events and keeps what the summary needs.
type report struct {
	module string
	tests  map[string]*test // by package + "\x00" + name
	// pkgOutput is what a package printed outside any test (a panic, a timeout, a build error).
	pkgOutput map[string][]string
	failedPkg map[string]bool
	passed    int
	skipped   int
	ended     int
}

func newReport(module string) *report {
	return &report{module: module, tests: map[string]*test{}, pkgOutput: map[string][]string{}, failedPkg: map[string]bool{}}
}

// Read consumes the stream, writing to live what `go test` without -v prints as it goes: each
// package's result line and the output of builds. The failed tests' output is kept for the end.
func (r *report) Read(in io.Reader, live io.Writer) error {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if err := json.Unmarshal(line, &e); err != nil || e.Action == "" {
			// Not an event (go vet's or the linker's words before the stream): as is.
			fmt.Fprintln(live, string(line))
			continue
		}
		r.add(e, live)
	}
	return sc.Err()
}

func (r *report) add(e event, live io.Writer) {
	pkg := e.Package
	if pkg == "" {
		// A build event names the package being built: "m/p [m/p.test]" for its test binary.
		pkg, _, _ = strings.Cut(e.ImportPath, " ")
	}
	switch {
	case e.Action == "build-output":
		fmt.Fprint(live, e.Output)
		r.pkgOutput[pkg] = append(r.pkgOutput[pkg], e.Output)
		return
	case e.Action == "build-fail":
		r.failedPkg[pkg] = true
		return
	case e.Test == "":
		switch e.Action {
		case "output":
			r.pkgOutput[pkg] = append(r.pkgOutput[pkg], e.Output)
			if out := strings.TrimSpace(e.Output); out != "PASS" && out != "FAIL" && !strings.HasPrefix(out, "=== ") {
				fmt.Fprint(live, e.Output)
			}
		case "fail":
			r.failedPkg[pkg] = true
		}
		return
	}
	key := pkg + "\x00" + e.Test
	t := r.tests[key]
	if t == nil {
		t = &test{pkg: pkg, name: e.Test}
		r.tests[key] = t
	}
	switch e.Action {
	case "output":
		t.output = append(t.output, e.Output)
	case "pass":
		r.passed++
		t.output = nil // what a passing test logged is not reported, as go test without -v
	case "skip":
		r.skipped++
		t.output = nil
	case "fail":
		t.failed = true
		t.elapsed = time.Duration(e.Elapsed * float64(time.Second))
		t.order = r.ended
		r.ended++
	}
}

// callSite matches a line the testing package prefixes with its call site (file.go:line: ...).
var callSite = regexp.MustCompile(`^\s*([\w.-]+\.go):(\d+): (.*)$`)

// failures are the failed tests that did not fail only because a subtest did (a parent whose
// own output names no test file, such as the logs its cleanups print on failure, is left out:
// its failed subtests are listed), in the order they ended.
func (r *report) failures() []*test {
	var out []*test
	for _, t := range r.tests {
		if !t.failed {
			continue
		}
		if r.failedChild(t) && !strings.HasSuffix(strings.SplitN(t.where(), ":", 2)[0], "_test.go") {
			continue
		}
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].order < out[j].order })
	return out
}

func (r *report) failedChild(p *test) bool {
	for _, t := range r.tests {
		if t.failed && t.pkg == p.pkg && strings.HasPrefix(t.name, p.name+"/") {
			return true
		}
	}
	return false
}

// where is the test's failure as "file.go:line: message": the last line a _test.go file
// printed, else the last line with any call site, else "". The testing package prints t.Log
// and t.Error alike, so this is the failure where a test logs before it fails, not after (the
// project's tests do: t.Fatal ends a test; the lab's helpers that log on failure, in a Cleanup,
// are not test files).
func (t *test) where() string {
	var last, lastTest string
	for _, chunk := range t.output {
		for _, l := range strings.Split(strings.TrimRight(chunk, "\n"), "\n") {
			m := callSite.FindStringSubmatch(l)
			if m == nil {
				continue
			}
			last = m[0]
			if strings.HasSuffix(m[1], "_test.go") {
				lastTest = m[0]
			}
		}
	}
	if lastTest != "" {
		return strings.TrimSpace(lastTest)
	}
	return strings.TrimSpace(last)
}

// relative is the file's path in the repository: the package's directory under the module,
// then the file.
func (r *report) relative(pkg, file string) string {
	dir := strings.TrimPrefix(strings.TrimPrefix(pkg, r.module), "/")
	if dir == pkg && r.module != "" && pkg != r.module {
		return file // a package outside the module: its file name only
	}
	return path.Join(dir, file)
}

// dir names a package by its directory in the repository ("." for the module's root).
func (r *report) dir(pkg string) string {
	if d := r.relative(pkg, ""); d != "" {
		return d
	}
	return "."
}

// line is the one-line summary of a failed test: FAIL, the package's directory, the test, its
// time, and where it failed with the message's first line (cut to keep it one line).
func (r *report) line(t *test) string {
	where := t.where()
	if m := callSite.FindStringSubmatch(where); m != nil {
		msg := m[3]
		if len(msg) > 240 {
			msg = msg[:240] + " …"
		}
		where = fmt.Sprintf("%s:%s: %s", r.relative(t.pkg, m[1]), m[2], msg)
	} else {
		where = "(no file:line in its output: see its log above)"
	}
	return fmt.Sprintf("FAIL %s %s (%s) %s", r.dir(t.pkg), t.name, t.elapsed.Round(time.Second), where)
}

// Summary writes, once the stream has ended: the failed tests, one line each; then their whole
// output (the lab's logs run to kilobytes), and what a failed package printed outside its tests;
// then the failed tests once more and the counts, so that the last lines of a CI log name them.
// It returns whether anything failed.
func (r *report) Summary(w io.Writer) bool {
	fails := r.failures()
	var pkgs []string
	for p := range r.failedPkg {
		if !r.hasFailedTest(p) {
			pkgs = append(pkgs, p)
		}
	}
	sort.Strings(pkgs)
	if len(fails) == 0 && len(pkgs) == 0 {
		fmt.Fprintf(w, "\n%d passed, %d failed, %d skipped\n", r.passed, 0, r.skipped)
		return false
	}
	list := func() {
		for _, t := range fails {
			fmt.Fprintln(w, r.line(t))
		}
		for _, p := range pkgs {
			fmt.Fprintf(w, "FAIL %s (outside any test: a build error, a panic or a timeout)\n", r.dir(p))
		}
	}
	fmt.Fprintln(w, "\n=== failed tests")
	list()
	fmt.Fprintln(w, "\n=== their output")
	for _, t := range fails {
		fmt.Fprintf(w, "--- %s %s\n", r.dir(t.pkg), t.name)
		for _, o := range t.output {
			fmt.Fprint(w, o)
		}
	}
	for _, p := range pkgs {
		fmt.Fprintf(w, "--- %s (outside any test)\n", r.dir(p))
		out := r.pkgOutput[p]
		if len(out) > 200 {
			fmt.Fprintf(w, "[%d earlier lines left out]\n", len(out)-200)
			out = out[len(out)-200:]
		}
		for _, o := range out {
			fmt.Fprint(w, o)
		}
	}
	fmt.Fprintln(w, "\n=== failed tests (as listed above their output)")
	list()
	fmt.Fprintf(w, "\n%d passed, %d failed, %d skipped\n", r.passed, len(fails)+len(pkgs), r.skipped)
	return true
}

func (r *report) hasFailedTest(pkg string) bool {
	for _, t := range r.tests {
		if t.failed && t.pkg == pkg {
			return true
		}
	}
	return false
}
