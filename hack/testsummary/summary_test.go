package main

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

// testdata/stream.json is `go test -json ./...` of a module example.com/demo with a passing
// test, a parent whose first subtest fails (after a log line) and whose second skips, a cleanup
// logging from a helper file on failure, and a package that panics.
func TestSummaryNamesEachFailureOnOneLine(t *testing.T) {
	in, err := os.Open("testdata/stream.json")
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	r := newReport("example.com/demo")
	var live, end bytes.Buffer
	if err := r.Read(in, &live); err != nil {
		t.Fatal(err)
	}
	if !r.Summary(&end) {
		t.Fatal("Summary reports no failure")
	}
	for _, want := range []string{"FAIL\texample.com/demo/a\t", "FAIL\texample.com/demo/b\t"} {
		if !strings.Contains(live.String(), want) {
			t.Errorf("live output lacks %q:\n%s", want, live.String())
		}
	}
	if strings.Contains(live.String(), "quiet") || strings.Contains(live.String(), "progress") {
		t.Errorf("live output holds tests' logs:\n%s", live.String())
	}
	wantLines := []string{
		"FAIL a TestParent/child_one (0s) a/a_test.go:10: lag 25249, want < 2000",
		"FAIL b TestPanics (0s) (no file:line in its output: see its log above)",
	}
	out := end.String()
	list := strings.SplitN(strings.SplitN(out, "=== failed tests\n", 2)[1], "\n\n", 2)[0]
	if got := strings.Split(list, "\n"); strings.Join(got, "\n") != strings.Join(wantLines, "\n") {
		t.Errorf("the failed tests:\n%s\nwant:\n%s", list, strings.Join(wantLines, "\n"))
	}
	// The list comes before the logs, and again at the very end with the counts.
	if i, j := strings.Index(out, wantLines[0]), strings.Index(out, "a_test.go:9: progress"); i < 0 || j < i {
		t.Errorf("the list does not come before the failed tests' output:\n%s", out)
	}
	if !strings.HasSuffix(out, wantLines[len(wantLines)-1]+"\n\n1 passed, 2 failed, 1 skipped\n") {
		t.Errorf("the summary does not end with the list and the counts:\n%s", out)
	}
	if strings.Contains(out, "quiet") {
		t.Errorf("a passing test's log is reported:\n%s", out)
	}
}

func TestSummaryOfAPassingRun(t *testing.T) {
	r := newReport("m")
	var live, end bytes.Buffer
	stream := `{"Action":"run","Package":"m/p","Test":"TestA"}
{"Action":"output","Package":"m/p","Test":"TestA","Output":"    p_test.go:3: fine\n"}
{"Action":"pass","Package":"m/p","Test":"TestA","Elapsed":0.1}
{"Action":"output","Package":"m/p","Output":"ok  \tm/p\t0.1s\n"}
{"Action":"pass","Package":"m/p","Elapsed":0.1}
not json: as is
`
	if err := r.Read(strings.NewReader(stream), &live); err != nil {
		t.Fatal(err)
	}
	if r.Summary(&end) {
		t.Errorf("a passing run reported failed: %s", end.String())
	}
	if got, want := live.String(), "ok  \tm/p\t0.1s\nnot json: as is\n"; got != want {
		t.Errorf("live = %q, want %q", got, want)
	}
	if got := end.String(); got != "\n1 passed, 0 failed, 0 skipped\n" {
		t.Errorf("summary = %q", got)
	}
}

func TestBuildFailureIsNamed(t *testing.T) {
	r := newReport("m")
	stream := `{"ImportPath":"m/p [m/p.test]","Action":"build-output","Output":"p/x.go:3:1: syntax error\n"}
{"ImportPath":"m/p [m/p.test]","Action":"build-fail"}
{"Action":"start","Package":"m/p"}
{"Action":"output","Package":"m/p","Output":"FAIL\tm/p [build failed]\n"}
{"Action":"fail","Package":"m/p","Elapsed":0,"FailedBuild":"m/p [m/p.test]"}
`
	var live, end bytes.Buffer
	if err := r.Read(strings.NewReader(stream), &live); err != nil {
		t.Fatal(err)
	}
	if !r.Summary(&end) || !strings.Contains(end.String(), "FAIL p (outside any test") {
		t.Errorf("a build failure is not named:\n%s", end.String())
	}
	if !strings.Contains(live.String(), "syntax error") {
		t.Errorf("the compiler's words are not shown: %q", live.String())
	}
}
