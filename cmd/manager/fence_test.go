package main

import (
	"context"
	"encoding/pem"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/rest"
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

// TestFenceAtTheConnection: a write that passed the fence and was held before its bytes left (a
// process frozen between the check and the connection, as TestStandbyTakesOver caught on
// 2026-11-29) is refused by its connection once the fence has closed, and never reaches the
// server; reads go on over the transport's own connections, fenced or not. The client is
// client-go's, built as the manager builds it (rest.Config.Wrap), over TLS, so the fence meets the
// transport client-go really hands it (inside its TLS cache's wrapper).
func TestFenceAtTheConnection(t *testing.T) {
	var mu sync.Mutex
	var got []string
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.Method+" "+r.URL.Path+" "+r.Proto)
		mu.Unlock()
	}))
	srv.EnableHTTP2 = true // as kube-apiserver
	srv.StartTLS()
	defer srv.Close()

	// The clock: now, or, once frozen is set, now for the first look and 11 s later from the
	// next on: the request passes the check before it is sent, and its connection sees the
	// fence closed, as a process frozen between the two would.
	var clock sync.Mutex
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	frozen, looked := false, false
	f := newFence(&lockStub{}, 10*time.Second)
	f.now = func() time.Time {
		clock.Lock()
		defer clock.Unlock()
		if frozen && looked {
			return now.Add(11 * time.Second)
		}
		looked = true
		return now
	}
	freeze := func(on bool) { clock.Lock(); frozen, looked = on, false; clock.Unlock() }

	cfg := &rest.Config{Host: srv.URL, BearerToken: "token", TLSClientConfig: rest.TLSClientConfig{
		CAData: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})}}
	cfg.Wrap(f.wrap)
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	do := func(method, path string) error {
		r, err := http.NewRequest(method, srv.URL+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := hc.Do(r)
		if err == nil {
			resp.Body.Close()
		}
		return err
	}
	renew := func() {
		if err := f.Update(context.Background(), resourcelock.LeaderElectionRecord{}); err != nil {
			t.Fatal(err)
		}
	}

	renew()
	for _, r := range []struct{ method, path string }{{http.MethodPatch, "/apis/x/v1/first"}, {http.MethodGet, "/api/v1/pods"}} {
		if err := do(r.method, r.path); err != nil {
			t.Fatalf("%s %s within the lease: %v", r.method, r.path, err)
		}
	}
	freeze(true)
	if err := do(http.MethodPatch, "/apis/x/v1/frozen"); err == nil || !strings.Contains(err.Error(), "fenced") {
		t.Fatalf("a write woken past the fence: %v, want it refused by its connection", err)
	}
	if err := do(http.MethodGet, "/api/v1/pods"); err != nil {
		t.Fatalf("a read while fenced: %v", err)
	}
	if err := do(http.MethodPost, "/api/v1/pods"); err == nil || !strings.Contains(err.Error(), "fenced") {
		t.Fatalf("a write while fenced: %v", err)
	}
	freeze(false)
	renew()
	if err := do(http.MethodPatch, "/apis/x/v1/renewed"); err != nil {
		t.Fatalf("a write after a renewal: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	// Writes over HTTP/1.1 connections of their own; reads over the transport's HTTP/2.
	want := []string{"PATCH /apis/x/v1/first HTTP/1.1", "GET /api/v1/pods HTTP/2.0", "GET /api/v1/pods HTTP/2.0", "PATCH /apis/x/v1/renewed HTTP/1.1"}
	if strings.Join(got, ", ") != strings.Join(want, ", ") {
		t.Errorf("the server received %q, want %q", got, want)
	}
}

// TestUnderlying: the *http.Transport is found under client-go's wrappers.
func TestUnderlying(t *testing.T) {
	base := &http.Transport{}
	if got := underlying(&wrapper{&wrapper{base}}); got != base {
		t.Errorf("under two wrappers: %p, want %p", got, base)
	}
	if got := underlying(roundTripper(func(*http.Request) (*http.Response, error) { return nil, nil })); got != nil {
		t.Errorf("a RoundTripper with no transport under it: %p, want nil", got)
	}
}

type wrapper struct{ rt http.RoundTripper }

func (w *wrapper) RoundTrip(r *http.Request) (*http.Response, error) { return w.rt.RoundTrip(r) }
func (w *wrapper) WrappedRoundTripper() http.RoundTripper            { return w.rt }
