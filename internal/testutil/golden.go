package testutil

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// update is the one -update flag of every package whose tests compare with golden files:
// `go test ./internal/desired -update` rewrites that package's files, to review as a diff.
var update = flag.Bool("update", false, "rewrite the golden files in testdata/ instead of comparing")

// Golden compares got with the file at path; with -update it writes got there instead.
func Golden(t testing.TB, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run the package's tests with -update to create it)", err)
	}
	if !bytes.Equal(want, got) {
		t.Errorf("%s differs (run the package's tests with -update if the change is intended, and review the diff):\n%s",
			path, LineDiff(string(want), string(got)))
	}
}

// GoldenSet compares a set of files, by path, with Golden, and reports the files matching glob
// that the set no longer has (with -update: removes them), so that a renamed or dropped object
// does not leave a stale file behind that still looks pinned.
func GoldenSet(t testing.TB, glob string, files map[string][]byte) {
	t.Helper()
	for path, got := range files {
		Golden(t, path, got)
	}
	stale, _ := filepath.Glob(glob)
	for _, path := range stale {
		if _, ok := files[path]; ok {
			continue
		}
		if *update {
			_ = os.Remove(path)
		} else {
			t.Errorf("%s is no longer produced: remove it (or run with -update)", path)
		}
	}
}

// LineDiff lists the lines only in want (-) or only in got (+), in order: enough to see what
// changed in a golden file.
func LineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	count := func(lines []string) map[string]int {
		m := map[string]int{}
		for _, l := range lines {
			m[l]++
		}
		return m
	}
	wc, gc := count(w), count(g)
	var out []string
	for _, l := range w {
		if gc[l] == 0 {
			out = append(out, "- "+l)
		} else {
			gc[l]--
		}
	}
	for _, l := range g {
		if wc[l] == 0 {
			out = append(out, "+ "+l)
		} else {
			wc[l]--
		}
	}
	return strings.Join(out, "\n")
}
