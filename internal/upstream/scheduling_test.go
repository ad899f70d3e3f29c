package upstream

import (
	"context"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/internal/desired"
	"github.com/strata-dev/strata/internal/testutil"
)

// TestUnschedulablePodsOnRealControllers runs the sample on a cluster with too few nodes for it:
// two workers with the NVMe tier's disks (one local volume each), two without, and the tainted
// control plane. The sample plans four Elasticsearch data nodes on the tier, so the real
// scheduler finds no node for two of ECK's data pods. The pipeline's PodsScheduled names those pods, their
// nodeSet and the scheduler's own words, and so does Ready. Six more NVMe workers join: Strata's
// tier makes their volumes, the scheduler places the pods, and PodsScheduled turns True. Each pod
// found is one ECK or the Spark operator made with Strata's label: the proof that the label
// reaches their pods.
func TestUnschedulablePodsOnRealControllers(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the upstream harness starts a control plane and six controllers")
	}
	tiers, p := Samples(t)
	var nodes, more []Node
	for _, n := range DefaultNodes() {
		switch {
		case n.ControlPlane, n.Name == "plain-0", n.Name == "plain-1", n.Name == "nvme-0", n.Name == "nvme-1":
			nodes = append(nodes, n)
		case n.Labels[NVMeLabel] == "true" && len(more) < 6:
			more = append(more, n)
		}
	}
	// Without Strimzi: its brokers would take some of the same disks, and which pods go without
	// would be a race. TestStrimziRunsTheSample checks that Strimzi's pods carry Strata's labels.
	h := Start(t, Options{Fixtures: tiers, Nodes: nodes, WithoutStrimzi: true})
	ctx := context.Background()
	if err := h.Client.Create(ctx, p); err != nil {
		t.Fatalf("applying the sample pipeline: %v", err)
	}
	got := &v1alpha1.AnalyticsPipeline{}
	testutil.Eventually(t, upstreamWait, "PodsScheduled=False naming ECK's data pods and the scheduler's reason", func() error {
		if err := h.Client.Get(ctx, client.ObjectKeyFromObject(p), got); err != nil {
			return err
		}
		c := meta.FindStatusCondition(got.Status.Conditions, v1alpha1.ConditionPodsScheduled)
		switch {
		case c == nil:
			return fmt.Errorf("no PodsScheduled yet")
		case c.Status != metav1.ConditionFalse || c.Reason != v1alpha1.ReasonUnschedulable:
			return fmt.Errorf("PodsScheduled=%s %s: %s", c.Status, c.Reason, c.Message)
		case !strings.HasPrefix(c.Message, "2 pod(s) cannot be scheduled: Elasticsearch sensors nodeSet data: sensors-es-data-"):
			// Two volumes for four data pods: two go without, once the scheduler has tried both.
			return fmt.Errorf("PodsScheduled does not name two of ECK's data pods yet: %s", c.Message)
		case !strings.Contains(c.Message, "nodes are available"):
			return fmt.Errorf("PodsScheduled does not carry the scheduler's message: %s", c.Message)
		}
		return nil
	})
	c := meta.FindStatusCondition(got.Status.Conditions, v1alpha1.ConditionPodsScheduled)
	t.Logf("PodsScheduled=%s %s: %s", c.Status, c.Reason, c.Message)
	// The pods, found by Strata's label alone: ECK's, and the driver spark-submit makes (a while
	// after ECK's: the Spark operator runs spark-submit, a JVM, for it).
	pods := &corev1.PodList{}
	workloads := map[string]int{}
	testutil.Eventually(t, upstreamWait, "ECK's and the Spark operator's pods with Strata's labels", func() error {
		if err := h.Client.List(ctx, pods, client.InNamespace(p.Namespace), client.MatchingLabels{desired.LabelPipeline: p.Name}); err != nil {
			return err
		}
		workloads = map[string]int{}
		for _, pod := range pods.Items {
			workloads[pod.Labels[desired.LabelWorkload]]++
		}
		for _, w := range []string{desired.WorkloadElasticsearchMaster, desired.WorkloadElasticsearchData, desired.WorkloadSparkDriver} {
			if workloads[w] == 0 {
				return fmt.Errorf("no pod labelled %s=%s (its operator copies Strata's labels): %v", desired.LabelWorkload, w, workloads)
			}
		}
		return nil
	})
	t.Logf("the pipeline's pods by workload (strata.dev/workload): %v", workloads)
	for _, pod := range pods.Items {
		if why := scheduling(&pod); strings.HasPrefix(why, corev1.PodReasonUnschedulable) {
			t.Logf("pod %s (%s): %s", pod.Name, pod.Labels[desired.LabelWorkload], why)
		}
	}
	plan, storage := meta.FindStatusCondition(got.Status.Conditions, v1alpha1.ConditionPlanValid),
		meta.FindStatusCondition(got.Status.Conditions, v1alpha1.ConditionStorageReady)
	r := meta.FindStatusCondition(got.Status.Conditions, v1alpha1.ConditionReady)
	if r != nil {
		t.Logf("Ready=%s %s: %.200s", r.Status, r.Reason, r.Message)
	}
	if r == nil || r.Status != metav1.ConditionFalse {
		t.Errorf("Ready %+v with unschedulable pods, want False", r)
	} else if plan != nil && plan.Status == metav1.ConditionTrue && storage != nil && storage.Status == metav1.ConditionTrue &&
		r.Reason != v1alpha1.ReasonUnschedulable {
		t.Errorf("Ready %s %q, want it to name the unschedulable pods", r.Reason, r.Message)
	}

	h.AddNodes(ctx, t, more...)
	testutil.Eventually(t, upstreamWait, "PodsScheduled=True once more NVMe workers joined", func() error {
		if err := h.Client.Get(ctx, client.ObjectKeyFromObject(p), got); err != nil {
			return err
		}
		c := meta.FindStatusCondition(got.Status.Conditions, v1alpha1.ConditionPodsScheduled)
		if c == nil || c.Status != metav1.ConditionTrue {
			return fmt.Errorf("PodsScheduled %+v", c)
		}
		return nil
	})
	c = meta.FindStatusCondition(got.Status.Conditions, v1alpha1.ConditionPodsScheduled)
	t.Logf("PodsScheduled=%s %s: %s", c.Status, c.Reason, c.Message)
	h.Alive(t)
}
