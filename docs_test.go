package strata_test

// The documentation is read by people who have only the repository: every relative link must
// lead to a file (and heading) that exists, nothing may point at files outside the repository,
// and the README stays short enough to be read in one go.

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// skipDirs are not documentation of ours: build output, vendored upstream files, tool caches.
var skipDirs = map[string]bool{".git": true, "bin": true, "third_party": true, "target": true,
	"node_modules": true, "artifacts": true}

// markdownLink matches [text](target) outside code spans well enough for our docs: the target
// has no spaces or parentheses.
var markdownLink = regexp.MustCompile(`\]\(([^()\s]+)\)`)

func TestDocsLinks(t *testing.T) {
	docs := markdownFiles(t)
	if len(docs) < 10 {
		t.Fatalf("found %d Markdown files; expected the README and docs/", len(docs))
	}
	anchors := map[string]map[string]bool{}
	for _, f := range docs {
		anchors[f] = headingAnchors(t, f)
	}
	for _, f := range docs {
		for n, line := range readLines(t, f) {
			for _, m := range markdownLink.FindAllStringSubmatch(stripCodeSpans(line), -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				file, anchor, _ := strings.Cut(target, "#")
				resolved := f
				if file != "" {
					resolved = filepath.Clean(filepath.Join(filepath.Dir(f), file))
					if _, err := os.Stat(resolved); err != nil {
						t.Errorf("%s:%d: link %q: %s does not exist", f, n+1, target, resolved)
						continue
					}
				}
				if anchor == "" || !strings.HasSuffix(resolved, ".md") {
					continue
				}
				if a, ok := anchors[resolved]; ok && !a[anchor] {
					t.Errorf("%s:%d: link %q: %s has no heading #%s", f, n+1, target, resolved, anchor)
				}
			}
		}
	}
}

// TestNoReferencesOutsideRepository: code, docs and scripts must make sense in a plain clone.
func TestNoReferencesOutsideRepository(t *testing.T) {
	outside := regexp.MustCompile(`\.\./shared|\bDESIGN\.md|\bAPI\.md`)
	err := filepath.WalkDir(".", func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if skipDirs[d.Name()] {
				return filepath.SkipDir
			}
			return nil
		}
		switch filepath.Ext(path) {
		case ".go", ".md", ".yaml", ".sh", ".java", ".xml", ".json", ".tpl", ".txt":
		default:
			if d.Name() != "Makefile" && d.Name() != "Dockerfile" {
				return nil
			}
		}
		if path == "docs_test.go" {
			return nil
		}
		for n, line := range readLines(t, path) {
			if outside.MatchString(line) {
				t.Errorf("%s:%d refers to a file outside the repository: %s", path, n+1, strings.TrimSpace(line))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestReadmeLength(t *testing.T) {
	if n := len(readLines(t, "README.md")); n > 300 {
		t.Errorf("README.md has %d lines; keep it under 300 and move detail into docs/", n)
	}
}

func markdownFiles(t *testing.T) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(".", func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && skipDirs[d.Name()] {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(path, ".md") {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// headingAnchors returns the anchors GitHub gives a file's headings: lower case, spaces as
// hyphens, punctuation other than hyphens and underscores dropped.
func headingAnchors(t *testing.T, path string) map[string]bool {
	anchors := map[string]bool{}
	inFence := false
	for _, line := range readLines(t, path) {
		if strings.HasPrefix(line, "```") {
			inFence = !inFence
		}
		if inFence || !strings.HasPrefix(line, "#") {
			continue
		}
		title := strings.TrimSpace(strings.TrimLeft(line, "#"))
		var b strings.Builder
		for _, r := range strings.ToLower(title) {
			switch {
			case unicode.IsLetter(r), unicode.IsDigit(r), r == '-', r == '_':
				b.WriteRune(r)
			case r == ' ':
				b.WriteRune('-')
			}
		}
		anchors[b.String()] = true
	}
	return anchors
}

func stripCodeSpans(line string) string {
	return regexp.MustCompile("`[^`]*`").ReplaceAllString(line, "")
}

func readLines(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var lines []string
	s := bufio.NewScanner(f)
	s.Buffer(make([]byte, 1<<20), 1<<20)
	for s.Scan() {
		lines = append(lines, s.Text())
	}
	if err := s.Err(); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return lines
}
