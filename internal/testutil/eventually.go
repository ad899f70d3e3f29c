package testutil

import (
	"testing"
	"time"
)

// Poll is how often Eventually checks again: short, since what it waits for is usually a
// reconcile of a few milliseconds, and cheap, since checks read a cache or a counter.
const Poll = 50 * time.Millisecond

// Eventually calls check until it returns nil, and fails the test with check's last error when
// timeout passes first. It is the one way the tests wait: for something to happen, never to
// prove that something did not (that is proven on the finished reconcile itself).
func Eventually(t testing.TB, timeout time.Duration, what string, check func() error) {
	t.Helper()
	if err := Wait(timeout, check); err != nil {
		t.Fatalf("timed out after %s waiting for %s: %v", timeout, what, err)
	}
}

// Wait is Eventually for callers that report the failure themselves (a goroutine, a benchmark
// that must stop a process first): nil once check passed, else check's last error.
func Wait(timeout time.Duration, check func() error) error {
	deadline := time.Now().Add(timeout)
	for {
		err := check()
		if err == nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(Poll)
	}
}
