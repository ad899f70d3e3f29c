package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
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
func (f *fence) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripper(func(r *http.Request) (*http.Response, error) {
		if fenced(r) {
			if ok, until := f.open(); !ok {
				return nil, fmt.Errorf("not sending %s %s: this replica's leader lease was last renewed for writes until %s (fenced: another replica may lead)",
					r.Method, r.URL.Path, until.Format(time.RFC3339Nano))
			}
		}
		return rt.RoundTrip(r)
	})
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
