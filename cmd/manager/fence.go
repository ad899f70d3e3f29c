package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/client-go/kubernetes"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/client-go/tools/record"
)

// fence keeps a leader's writes inside its lease. client-go's elector (tools/leaderelection,
// LeaderElector.renew) gives leadership up only when a renewal has failed for RenewDeadline, and
// controller-runtime exits only then (manager/internal.go, OnStoppedLeading): a leader frozen
// past its lease (a long GC pause, a throttled cgroup, a suspended VM) goes on reconciling when
// it wakes, beside the standby that took the lease over, until its elector times out — up to
// RenewDeadline (10 s by default; internal/chaos's TestStandbyTakesOver measured it). The fence
// wraps the lock, notes when each renewal that succeeded was sent, and refuses every write the
// manager's clients make once RenewDeadline has passed since: a standby can take the lease
// over only LeaseDuration after it saw that renewal, later still, so a refused write is one
// that could have overlapped. Writes resume with the next renewal (a leader that was merely
// slow keeps its lease) and never start on a standby (it renewed nothing).
type fence struct {
	resourcelock.Interface
	deadline time.Duration
	now      func() time.Time

	mu    sync.Mutex
	until time.Time
}

func newFence(lock resourcelock.Interface, renewDeadline time.Duration) *fence {
	return &fence{Interface: lock, deadline: renewDeadline, now: time.Now}
}

// Create and Update are the lock's writes: the elector acquires with Create or Update and renews
// with Update (LeaderElector.tryAcquireOrRenew).
func (f *fence) Create(ctx context.Context, r resourcelock.LeaderElectionRecord) error {
	sent := f.now()
	err := f.Interface.Create(ctx, r)
	f.renewed(sent, err)
	return err
}

func (f *fence) Update(ctx context.Context, r resourcelock.LeaderElectionRecord) error {
	sent := f.now()
	err := f.Interface.Update(ctx, r)
	f.renewed(sent, err)
	return err
}

func (f *fence) renewed(sent time.Time, err error) {
	if err != nil {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if t := sent.Add(f.deadline); t.After(f.until) {
		f.until = t
	}
}

// open says whether a write may go now.
func (f *fence) open() (bool, time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now().Before(f.until), f.until
}

// wrap guards the writes of a client's transport (rest.Config.WrapTransport). Reviews (a
// TokenReview, a SubjectAccessReview: the metrics endpoint's checks of its scrapers) change
// nothing and pass.
//
// A check before a request is sent is not the last moment it could be stopped: a write that
// passed it and was then frozen with its process (a long GC pause, SIGSTOP) before its bytes left
// reaches the API server when the process wakes, after a standby took the lease over
// (TestStandbyTakesOver found three PATCHes of a frozen leader landing 0.25 s into the next
// tenure, on 2026-11-29). So writes go over connections of their own (writeTransport) whose every
// Write checks the fence again, just before the bytes reach the kernel; once there, a frozen
// process no longer holds them back.
func (f *fence) wrap(rt http.RoundTripper) http.RoundTripper {
	writes := &writeTransport{f: f, rt: rt}
	return roundTripper(func(r *http.Request) (*http.Response, error) {
		if !fenced(r) {
			return rt.RoundTrip(r)
		}
		if ok, until := f.open(); !ok {
			return nil, refused("sending "+r.Method+" "+r.URL.Path, until)
		}
		return writes.RoundTrip(r)
	})
}

// writeTransport sends the writes over a copy of client-go's transport of their own: HTTP/1.1,
// over connections that check the fence on every Write (fencedConn). HTTP/1.1, because an HTTP/2
// connection carries the reads too (a standby's informers, which must go on while it is fenced),
// and a clone of a transport x/net/http2 configured shares its HTTP/2 connection pool with the
// original.
//
// client-go hands WrapTransport its *http.Transport inside wrappers of its own
// (k8s.io/client-go/transport/cache.go: trackedTransport for the TLS cache's garbage
// collection; ca_rotation.go: atomicTransportHolder, which swaps the transport when the CA file
// changes), both utilnet.RoundTripperWrapper. The copy is made of the transport found under them
// at each write, and made again when it changes, so that a rotated CA reaches the writes too. A
// transport with no *http.Transport under it keeps the check before sending only.
type writeTransport struct {
	f  *fence
	rt http.RoundTripper

	mu          sync.Mutex
	base, clone *http.Transport
}

func (w *writeTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	base := underlying(w.rt)
	if base == nil {
		return w.rt.RoundTrip(r)
	}
	w.mu.Lock()
	if base != w.base {
		if w.clone != nil {
			w.clone.CloseIdleConnections()
		}
		w.base, w.clone = base, w.f.fencedCopy(base)
	}
	c := w.clone
	w.mu.Unlock()
	return c.RoundTrip(r)
}

// underlying is the *http.Transport under rt's wrappers, or nil.
func underlying(rt http.RoundTripper) *http.Transport {
	for range 8 {
		switch t := rt.(type) {
		case *http.Transport:
			return t
		case utilnet.RoundTripperWrapper:
			rt = t.WrappedRoundTripper()
		default:
			return nil
		}
	}
	return nil
}

// fencedCopy is base for HTTP/1.1 over fenced connections.
func (f *fence) fencedCopy(base *http.Transport) *http.Transport {
	t := base.Clone()
	t.ForceAttemptHTTP2 = false
	t.TLSNextProto = map[string]func(string, *tls.Conn) http.RoundTripper{}
	if t.TLSClientConfig != nil {
		t.TLSClientConfig.NextProtos = []string{"http/1.1"} // not the h2 ConfigureTransports added
	}
	dial := t.DialContext
	if dial == nil {
		dial = (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	}
	t.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &fencedConn{Conn: c, f: f}, nil
	}
	return t
}

// fencedConn refuses to write once the fence has closed: the request on it fails with the
// refusal, and net/http closes a connection a write failed on, so no later request reuses it.
type fencedConn struct {
	net.Conn
	f *fence
}

func (c *fencedConn) Write(b []byte) (int, error) {
	if ok, until := c.f.open(); !ok {
		return 0, refused("writing to the API server", until)
	}
	return c.Conn.Write(b)
}

// refused is the error of a write the fence stops, at either check.
func refused(what string, until time.Time) error {
	return fmt.Errorf("not %s: this replica's leader lease was last renewed for writes until %s (fenced: another replica may lead)",
		what, until.Format(time.RFC3339Nano))
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func fenced(r *http.Request) bool {
	switch r.Method {
	case http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
	default:
		return false
	}
	return !strings.HasPrefix(r.URL.Path, "/apis/authentication.k8s.io/") && !strings.HasPrefix(r.URL.Path, "/apis/authorization.k8s.io/")
}

// leaseLock is the Lease lock controller-runtime would make (leaderelection.NewResourceLock: the
// identity hostname_UUID, a client of its own whose requests time out after half the renew
// deadline, events for "became leader"), made here so that the fence can wrap it. Its own
// client is not fenced: the renewals are what opens the fence.
func leaseLock(cfg *rest.Config, namespace, name string, renewDeadline time.Duration, scheme *runtime.Scheme) (resourcelock.Interface, error) {
	if namespace == "" {
		b, err := os.ReadFile("/var/run/secrets/kubernetes.io/serviceaccount/namespace")
		if err != nil {
			return nil, fmt.Errorf("no --leader-election-namespace and not in a pod: %w", err)
		}
		namespace = strings.TrimSpace(string(b))
	}
	host, err := os.Hostname()
	if err != nil {
		return nil, err
	}
	id := host + "_" + string(uuid.NewUUID())
	cfg = rest.AddUserAgent(rest.CopyConfig(cfg), "leader-election")
	cfg.Timeout = max(renewDeadline/2, time.Second)
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	events := record.NewBroadcaster()
	events.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: cs.CoreV1().Events(namespace)})
	rec := events.NewRecorder(scheme, corev1.EventSource{Component: id})
	return resourcelock.New(resourcelock.LeasesResourceLock, namespace, name, cs.CoreV1(), cs.CoordinationV1(),
		resourcelock.ResourceLockConfig{Identity: id, EventRecorder: rec})
}
