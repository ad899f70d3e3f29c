package lab

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/internal/desired"
	"github.com/strata-dev/strata/internal/testutil"
)

// executorsInPlace changes the lab pipeline's executors through its spec (min and max, since the
// lab's autoscaler would otherwise move them within the range), standing in for the autoscaler,
// which changes them through its status: the real operator plans the new count and writes it to
// the pipeline's executor target; the job's driver, reading that ConfigMap as its ServiceAccount,
// removes an executor and later starts one, while it runs: same driver process, no resubmission,
// and the job keeps up. (That an executor change leaves the SparkApplication as it is, which the
// Spark operator would resubmit, is internal/upstream's TestLifecycleOnRealControllers, on the real Spark
// operator.) Every wait is bounded; the times are reported, not asserted.
func executorsInPlace(t *testing.T, ctx context.Context, l *Lab) {
	j := l.Job
	driver, restarts := j.current().Pid(), j.Restarts()
	if got := executorIDs(j); len(got) != labExecutors {
		t.Fatalf("executors before: %v, want %d", got, labExecutors)
	}
	for _, n := range []int32{1, labExecutors} {
		began := time.Now()
		before := executorIDs(j)
		setExecutors(t, ctx, l, n)
		testutil.Eventually(t, 2*time.Minute, fmt.Sprintf("the operator to write %d to the executor target", n), func() error {
			cm := &corev1.ConfigMap{}
			if err := l.Operator.Client.Get(ctx, client.ObjectKey{Namespace: l.Pipeline.Namespace, Name: desired.ExecutorsConfigMapName(l.Pipeline)}, cm); err != nil {
				return err
			}
			if got := cm.Data[desired.ExecutorsKey]; got != fmt.Sprint(n) {
				return fmt.Errorf("%s=%q", desired.ExecutorsKey, got)
			}
			return nil
		})
		written := time.Since(began)
		testutil.Eventually(t, 4*time.Minute, fmt.Sprintf("%d executors", n), func() error {
			if got := executorIDs(j); len(got) != int(n) {
				return fmt.Errorf("executors %v", got)
			}
			return nil
		})
		after := executorIDs(j)
		t.Logf("executors %v -> %v: the target written %s after the spec changed, the executors there %s after",
			before, after, written.Round(time.Second), time.Since(began).Round(time.Second))
		if n < int32(len(before)) {
			for _, id := range after {
				if !slices.Contains(before, id) {
					t.Errorf("scaling down started executor %s (before %v, after %v)", id, before, after)
				}
			}
		}
	}
	if now := j.current().Pid(); now != driver || j.Restarts() != restarts {
		t.Errorf("the driver was replaced (pid %d -> %d, restarts %d -> %d): the executors were to change in place",
			driver, now, restarts, j.Restarts())
	}
	if r, ok := l.WaitCaughtUp(ctx, 3*time.Minute); !ok {
		t.Errorf("the job did not keep up after its executors changed in place: %v", r)
	}
}

// setExecutors sets the lab pipeline's executors to n (min and max) in the control plane.
func setExecutors(t *testing.T, ctx context.Context, l *Lab, n int32) {
	t.Helper()
	p := &v1alpha1.AnalyticsPipeline{}
	if err := l.Operator.Client.Get(ctx, client.ObjectKeyFromObject(l.Pipeline), p); err != nil {
		t.Fatal(err)
	}
	patch := client.MergeFrom(p.DeepCopy())
	p.Spec.Spark.Executors.Min, p.Spec.Spark.Executors.Max = n, n
	if err := l.Operator.Client.Patch(ctx, p, patch); err != nil {
		t.Fatalf("setting the lab pipeline's executors to %d: %v", n, err)
	}
}

// executorIDs are the IDs of the job's executor JVMs, sorted.
func executorIDs(j *IngestJob) []string {
	var ids []string
	for _, e := range j.Executors() {
		ids = append(ids, e.ID)
	}
	sort.Strings(ids)
	return ids
}
