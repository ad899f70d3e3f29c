package strata_test

// Checks of the container image that run without a Docker engine: the Dockerfile's shape, and its
// Go build — hack/build.sh, run on a copy of the build context made with .dockerignore — producing
// static binaries that start.

import (
	"bufio"
	"bytes"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
)

// TestDockerfile checks what the image promises: a multi-stage build whose Go step is
// hack/build.sh, a distroless nonroot base, the manager as entrypoint and the CLI beside it.
func TestDockerfile(t *testing.T) {
	b, err := os.ReadFile("Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	df := string(b)
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`(?m)^FROM .*golang:\$\{GO_VERSION\}@\$\{GO_DIGEST\} AS build$`),
		regexp.MustCompile(`(?m)^ARG GO_DIGEST=sha256:[0-9a-f]{64}$`),
		regexp.MustCompile(`(?m)^ARG BASE_DIGEST=sha256:[0-9a-f]{64}$`),
		regexp.MustCompile(`(?m)^COPY \. \.$`),
		regexp.MustCompile(`(?m)GOOS=\$TARGETOS GOARCH=\$TARGETARCH hack/build\.sh /out$`),
		regexp.MustCompile(`(?m)^FROM gcr\.io/distroless/static[-a-z0-9]*:nonroot@\$\{BASE_DIGEST\}$`),
		regexp.MustCompile(`(?m)^COPY --from=build /out/manager /manager$`),
		regexp.MustCompile(`(?m)^COPY --from=build /out/strata /usr/local/bin/strata$`),
		regexp.MustCompile(`(?m)^USER 65532:65532$`),
		regexp.MustCompile(`(?m)^ENTRYPOINT \["/manager"\]$`),
	} {
		if !want.MatchString(df) {
			t.Errorf("Dockerfile: no line matching %s", want)
		}
	}
	// The image's Go version follows go.mod's.
	gomod, err := os.ReadFile("go.mod")
	if err != nil {
		t.Fatal(err)
	}
	goLine := regexp.MustCompile(`(?m)^go (\d+\.\d+)`).FindStringSubmatch(string(gomod))
	if goLine == nil || !strings.Contains(df, "ARG GO_VERSION="+goLine[1]+"\n") {
		t.Errorf("Dockerfile: ARG GO_VERSION must be go.mod's Go version %v", goLine)
	}
	// The build script is the one build line: static (no cgo) and reproducible (-trimpath).
	script, err := os.ReadFile(filepath.Join("hack", "build.sh"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"CGO_ENABLED=0", "-trimpath", "./cmd/$cmd", "for cmd in manager strata"} {
		if !strings.Contains(string(script), want) {
			t.Errorf("hack/build.sh does not contain %q", want)
		}
	}
}

// TestImageBuild runs the Dockerfile's build step without Docker: hack/build.sh on a copy of the
// build context (the tree minus .dockerignore), for linux as the image is, and checks that both
// binaries are static executables that start.
func TestImageBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the manager and the CLI")
	}
	root, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	ignored, err := dockerignore(filepath.Join(root, ".dockerignore"))
	if err != nil {
		t.Fatal(err)
	}
	ctxDir := filepath.Join(t.TempDir(), "context")
	if err := copyContext(root, ctxDir, ignored); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "out")
	cmd := exec.Command(filepath.Join(ctxDir, "hack", "build.sh"), out)
	cmd.Dir = ctxDir
	// As in the image's build stage: no .git in the context, linux binaries.
	cmd.Env = append(os.Environ(), "GOOS=linux", "GOARCH="+runtime.GOARCH, "GOFLAGS=-buildvcs=false")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("hack/build.sh in the build context (the tree minus .dockerignore) failed: %v\n%s", err, b)
	}
	for _, name := range []string{"manager", "strata"} {
		bin := filepath.Join(out, name)
		if err := checkStatic(bin); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		if b, err := os.ReadFile(bin); err == nil && bytes.Contains(b, []byte(ctxDir)) {
			t.Errorf("%s contains the build directory %s: -trimpath missing", name, ctxDir)
		}
	}
	// The manager starts and knows the flags the Helm chart passes.
	help, _ := exec.Command(filepath.Join(out, "manager"), "-help").CombinedOutput()
	for _, flag := range []string{"-leader-elect", "-health-probe-bind-address", "-metrics-bind-address", "-zap-log-level", "-watch-namespaces"} {
		if !strings.Contains(string(help), flag) {
			t.Errorf("manager -help does not list %s:\n%s", flag, help)
		}
	}
	if b, err := exec.Command(filepath.Join(out, "strata"), "plan", "-h").CombinedOutput(); !strings.Contains(string(b), "plan") {
		t.Errorf("strata plan -h: %v\n%s", err, b)
	}
}

// checkStatic fails for a binary that needs a dynamic loader or shared libraries, which the
// distroless static base does not have.
func checkStatic(path string) error {
	f, err := elf.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return errors.New("has a PT_INTERP program header (dynamically linked)")
		}
		if p.Type == elf.PT_DYNAMIC {
			return errors.New("has a PT_DYNAMIC program header (dynamically linked)")
		}
	}
	if libs, _ := f.ImportedLibraries(); len(libs) > 0 {
		return fmt.Errorf("needs shared libraries %v", libs)
	}
	return nil
}

// dockerignore reads .dockerignore: one top-level name per line. Anything else (globs, paths,
// exceptions) is refused, so that the copy copyContext makes is the context Docker sends.
func dockerignore(path string) (map[string]bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]bool{}
	s := bufio.NewScanner(f)
	for s.Scan() {
		line := strings.TrimSpace(s.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if strings.ContainsAny(line, "*?[]!/\\") {
			return nil, fmt.Errorf(".dockerignore: %s: only top-level names are allowed (see its header)", line)
		}
		out[line] = true
	}
	return out, s.Err()
}

// copyContext copies the regular files under root into dst, except the top-level names ignored.
func copyContext(root, dst string, ignored map[string]bool) error {
	return filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		if top, _, _ := strings.Cut(rel, string(filepath.Separator)); ignored[top] {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		in, err := os.Open(path)
		if err != nil {
			return err
		}
		defer in.Close()
		out, err := os.OpenFile(target, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, info.Mode().Perm())
		if err != nil {
			return err
		}
		if _, err := io.Copy(out, in); err != nil {
			out.Close()
			return err
		}
		return out.Close()
	})
}
