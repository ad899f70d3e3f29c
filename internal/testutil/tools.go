package testutil

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// Root is the repository's top folder (this file is two below it).
func Root() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

var tools sync.Map // name → toolResult

type toolResult struct {
	once sync.Once
	path string
	err  error
}

// Tool is the path of a pinned tool a test runs: $env when set (make test sets it), else what
// `hack/tools.sh path name` builds from the Go module proxy on first use and caches under bin/
// (minutes the first time). It fails the test, saying how to provide the tool, when neither works.
func Tool(t testing.TB, name, env string) string {
	t.Helper()
	if p := os.Getenv(env); p != "" {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("%s=%s: %v", env, p, err)
		}
		return p
	}
	v, _ := tools.LoadOrStore(name, &toolResult{})
	r := v.(*toolResult)
	r.once.Do(func() {
		var stderr bytes.Buffer
		cmd := exec.Command(filepath.Join(Root(), "hack", "tools.sh"), "path", name)
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			r.err = fmt.Errorf("%v\n%s", err, stderr.String())
			return
		}
		r.path = strings.TrimSpace(string(out))
	})
	if r.err != nil {
		t.Fatalf("%s is needed here and `hack/tools.sh path %s` could not build it (it builds the version hack/versions.env pins "+
			"from the Go module proxy); set %s to a %s binary instead: %v", name, name, env, name, r.err)
	}
	return r.path
}

// HTTPReady is a check for Eventually: nil once a GET of url answers 200 OK (a readiness probe).
func HTTPReady(url string) func() error {
	return func() error {
		resp, err := http.Get(url)
		if err != nil {
			return err
		}
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("GET %s: %s", url, resp.Status)
		}
		return nil
	}
}
