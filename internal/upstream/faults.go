package upstream

import (
	"context"
	"fmt"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// RestartAPIServer restarts kube-apiserver on the same etcd, port and certificates (every
// client's connection and watch is cut; nothing stored is lost), waits until it answers, checks
// that every upstream component outlived it, and returns how long the old process took to stop
// (with SIGTERM it drains its requests first; crash: SIGKILL) and the new one to answer.
func (h *Cluster) RestartAPIServer(t testing.TB, crash bool) (stopped, started time.Duration) {
	t.Helper()
	stopped, started, err := h.env.RestartAPIServer(crash)
	if err != nil {
		t.Fatal(err)
	}
	h.Alive(t)
	return stopped, started
}

// CompactEtcd compacts etcd's history to its current revision and returns the revision.
func (h *Cluster) CompactEtcd(t testing.TB) int64 {
	t.Helper()
	rev, err := h.env.CompactEtcd(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return rev
}

// Expired is nil when a watch of pods from resourceVersion rv is refused as too old (410 Gone,
// "too old resource version"): what every informer whose last resourceVersion is rv is told when
// it watches again, and which makes it list again. Pods: a kind every component watches.
func (h *Cluster) Expired(ctx context.Context, rv string) error {
	cs, err := kubernetes.NewForConfig(h.Config)
	if err != nil {
		return err
	}
	w, err := cs.CoreV1().Pods("").Watch(ctx, metav1.ListOptions{ResourceVersion: rv, AllowWatchBookmarks: false})
	if err != nil {
		if apierrors.IsResourceExpired(err) || apierrors.IsGone(err) {
			return nil
		}
		return err
	}
	defer w.Stop()
	// The API server may accept the watch and then send the 410 as its first event.
	select {
	case e, ok := <-w.ResultChan():
		if !ok {
			return fmt.Errorf("the watch from resourceVersion %s ended without an answer", rv)
		}
		if st, isStatus := e.Object.(*metav1.Status); isStatus && (st.Code == 410 || st.Reason == metav1.StatusReasonExpired || st.Reason == metav1.StatusReasonGone) {
			return nil
		}
		return fmt.Errorf("a watch from resourceVersion %s was served (%s event): not expired", rv, e.Type)
	case <-ctx.Done():
		return ctx.Err()
	}
}
