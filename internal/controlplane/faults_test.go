package controlplane

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// TestRestartAPIServerExpiresWatches: after etcd is compacted and kube-apiserver killed and started again, a
// client made before the restart still reaches it (same port, CA, client certificate), a watch
// from before the compaction is refused 410 Gone, and an informer running across the restart
// lists again (a second fresh start: a list, or a watch asking for the initial events) and sees
// an object created afterwards. The make test subset of internal/chaos' TestAPIServerFaults.
func TestRestartAPIServerExpiresWatches(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts a control plane and restarts its API server")
	}
	ctx, cancel := context.WithCancel(context.Background())
	env, err := Start(ctx, WithoutUpstreamCRDs())
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	// The informer's watch ends first: kube-apiserver stopped with one open drains for a minute.
	defer func() { cancel(); _ = env.Stop() }()
	t0 := time.Now()
	cs, err := kubernetes.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	cms := cs.CoreV1().ConfigMaps("default")
	create := func(name string) *corev1.ConfigMap {
		t.Helper()
		cm, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return cm
	}
	before := create("before")

	var fresh atomic.Int32 // the informer's fresh starts: lists, and watches with the initial events
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			fresh.Add(1)
			return cms.List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			if o.SendInitialEvents != nil && *o.SendInitialEvents {
				fresh.Add(1)
			}
			return cms.Watch(ctx, o)
		},
	}
	inf := cache.NewSharedIndexInformer(lw, &corev1.ConfigMap{}, 0, cache.Indexers{})
	go inf.Run(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		t.Fatal("the informer did not sync")
	}
	starts := fresh.Load()

	rev, err := env.CompactEtcd(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Killed: a graceful stop drains for a minute, beyond make test's budget; TestAPIServerFaults
	// (make chaos) restarts it both ways.
	t0 = time.Now()
	stopped, started, err := env.RestartAPIServer(true)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("etcd compacted at revision %d (the first object's resourceVersion %s); kube-apiserver stopped in %s, started in %s",
		rev, before.ResourceVersion, stopped.Round(100*time.Millisecond), started.Round(100*time.Millisecond))

	// Refused either at once or, as kube-apiserver 1.36 does here, as the watch's first event.
	w, err := cms.Watch(ctx, metav1.ListOptions{ResourceVersion: strconv.FormatInt(rev-1, 10)})
	if err == nil {
		select {
		case e := <-w.ResultChan():
			err = apierrors.FromObject(e.Object)
		case <-time.After(time.Minute):
		}
		w.Stop()
	}
	if !apierrors.IsResourceExpired(err) && !apierrors.IsGone(err) {
		t.Errorf("a watch from resourceVersion %d, before the compaction: %v, want 410 Gone", rev-1, err)
	}
	after := create("after")
	deadline := time.Now().Add(5 * time.Minute)
	for {
		_, seen, _ := inf.GetStore().GetByKey("default/after")
		if seen && fresh.Load() > starts {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 5 minutes: the informer saw %s: %v; fresh starts %d, %d before the restart",
				after.Name, seen, fresh.Load(), starts)
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("the informer listed again (%d fresh starts) and saw the object created after the restart, %s after the restart began",
		fresh.Load(), time.Since(t0).Round(100*time.Millisecond))
}

// stopper is envtest's Stop as stopAPIServer sees it: errs are its answers, in turn, then nil.
type stopper struct {
	errs  []error
	calls int
}

func (s *stopper) Stop() error {
	s.calls++
	if len(s.errs) == 0 {
		return nil
	}
	err := s.errs[0]
	s.errs = s.errs[1:]
	return err
}

// After a kill, envtest's Stop may find the process reaped and not yet marked exited: ESRCH is
// asked again until it is; any other error, or ESRCH without a kill, is the answer.
func TestStopAPIServerAfterAKill(t *testing.T) {
	gone := fmt.Errorf("unable to signal for process kube-apiserver to stop: %w", syscall.ESRCH)
	for _, c := range []struct {
		name    string
		errs    []error
		killed  bool
		calls   int
		wantErr bool
	}{
		{"stopped at once", nil, true, 1, false},
		{"reaped, not yet marked, twice", []error{gone, gone}, true, 3, false},
		{"not killed: ESRCH is an error", []error{gone}, false, 1, true},
		{"another error", []error{errors.New("timeout waiting for process kube-apiserver to stop")}, true, 1, true},
	} {
		s := &stopper{errs: c.errs}
		err := stopAPIServer(s, c.killed)
		if (err != nil) != c.wantErr || s.calls != c.calls {
			t.Errorf("%s: %v after %d calls, want an error %v after %d", c.name, err, s.calls, c.wantErr, c.calls)
		}
	}
}
