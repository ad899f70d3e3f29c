package envtestutil

import (
	"strings"
	"testing"
)

// shortKeeps are the envtest tests `go test -short` (make test-short, the inner loop) still runs
// in controllers/...: one reconcile of the sample pipeline on a real control plane, through its
// plan, every child applied, a resync that writes nothing, a scale up and down and the deletion.
// The others each start a control plane and a manager of their own (8 minutes together on a
// quiet 2-core machine); make test runs them all.
var shortKeeps = map[string]bool{"TestPipelineLifecycle": true}

// SkipUnderShort skips a test that starts a control plane when -short is set, unless it is one
// of shortKeeps. StartOperatorWith and controllers/tier's tierControlPlane call it, so every
// envtest test of the controllers' packages goes through it; their pure tests do not start one
// and always run.
func SkipUnderShort(t testing.TB) {
	t.Helper()
	if !testing.Short() {
		return
	}
	if _, ok := t.(*testing.B); ok {
		return // benchmarks run only with -bench, which asks for them by name
	}
	top, _, _ := strings.Cut(t.Name(), "/")
	if !shortKeeps[top] {
		t.Skip("-short: starts a control plane and the manager (make test runs it; go test -run " + top + " ./controllers/... alone)")
	}
}
