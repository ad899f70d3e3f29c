package main

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// lockStub is a lock whose writes fail when err is set.
type lockStub struct {
	resourcelock.Interface
	err error
}

func (l *lockStub) Create(context.Context, resourcelock.LeaderElectionRecord) error { return l.err }
func (l *lockStub) Update(context.Context, resourcelock.LeaderElectionRecord) error { return l.err }

// TestFence: writes go only within the renew deadline of the last renewal that succeeded,
// counted from when it was sent; reads and reviews always go.
func TestFence(t *testing.T) {
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	lock := &lockStub{}
	f := newFence(lock, 10*time.Second)
	f.now = func() time.Time { return now }
	sent := 0
	rt := f.wrap(roundTripper(func(*http.Request) (*http.Response, error) { sent++; return &http.Response{StatusCode: 200}, nil }))
	try := func(method, path string) error {
		r, err := http.NewRequest(method, "https://api"+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		_, err = rt.RoundTrip(r)
		return err
	}
	const pv = "/api/v1/persistentvolumes/pv-1"
	if err := try(http.MethodPatch, pv); err == nil || !strings.Contains(err.Error(), "fenced") {
		t.Fatalf("a write before any renewal (a standby's): %v, want it fenced", err)
	}
	for _, ok := range []struct{ method, path string }{{http.MethodGet, pv}, {http.MethodPost, "/apis/authentication.k8s.io/v1/tokenreviews"},
		{http.MethodPost, "/apis/authorization.k8s.io/v1/subjectaccessreviews"}} {
		if err := try(ok.method, ok.path); err != nil {
			t.Errorf("%s %s: %v, want it sent", ok.method, ok.path, err)
		}
	}
	if err := f.Create(context.Background(), resourcelock.LeaderElectionRecord{}); err != nil {
		t.Fatal(err)
	}
	now = now.Add(9 * time.Second)
	if err := try(http.MethodDelete, pv); err != nil {
		t.Fatalf("9 s after the acquisition: %v", err)
	}
	// A renewal that fails extends nothing; one sent 8 s after the acquisition extends to 18 s.
	lock.err = errors.New("conflict")
	_ = f.Update(context.Background(), resourcelock.LeaderElectionRecord{})
	now = now.Add(1 * time.Second)
	if err := try(http.MethodPut, pv); err == nil {
		t.Fatal("10 s after the last renewal that succeeded: sent, want it fenced")
	}
	lock.err = nil
	now = now.Add(-2 * time.Second)
	_ = f.Update(context.Background(), resourcelock.LeaderElectionRecord{})
	now = now.Add(9 * time.Second)
	if err := try(http.MethodPost, "/api/v1/namespaces/x/pods"); err != nil {
		t.Fatalf("9 s after a renewal: %v", err)
	}
	now = now.Add(time.Second)
	if err := try(http.MethodPost, "/api/v1/namespaces/x/pods"); err == nil {
		t.Fatal("a frozen leader's write, 10 s after its last renewal: sent, want it fenced")
	}
	if sent != 5 {
		t.Errorf("%d requests passed, want 5", sent)
	}
}
