package schema_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/internal/plan"
	"github.com/strata-dev/strata/internal/schema"
)

// TestMemoryRuleAgreesWithThePlanner runs the real MemorySpec CEL rule and plan.Compute on the
// same memory settings, aimed at the boundary where minHeap just fits or just doesn't, and
// requires the same verdict: a pipeline the API server admits must plan, and one it rejects
// must not. Budgets and minimum heaps are whole MiB (see internal/plan/memory.go for why
// fractions of a MiB can differ).
func TestMemoryRuleAgreesWithThePlanner(t *testing.T) {
	a := admission(t)
	tiers := []v1alpha1.StorageTier{{
		ObjectMeta: metav1.ObjectMeta{Name: "nvme-local"},
		Spec: v1alpha1.StorageTierSpec{
			Medium: v1alpha1.MediumNVMe, StorageClassName: "nvme",
			ReadBytesPerSecond: resource.MustParse("800M"), WriteBytesPerSecond: resource.MustParse("700M"),
			MonthlyPricePerGiB: "0.216",
		},
	}}
	rng := rand.New(rand.NewSource(7))
	n := 1500
	if testing.Short() {
		n = 200
	}
	for i := 0; i < n; i++ {
		budgetMiB := 513 + rng.Int63n(256*1024)
		pageCache, offHeap := rng.Int63n(81), rng.Int63n(91)
		// The heap the rule computes, in MiB, give or take one.
		b := budgetMiB << 20
		rest := b - b*pageCache/100
		heap := (rest - max(rest/11, 384<<20)) * (100 - offHeap) / 100
		minHeapMiB := max(1, heap>>20+rng.Int63n(3)-1)
		if minHeapMiB >= budgetMiB || minHeapMiB < 450 {
			continue // below 450Mi admission rejects minHeap itself (Spark's floor), not the split
		}
		obj := object(t, pipelineYAML,
			set(fmt.Sprintf("%dMi", budgetMiB), "spec", "spark", "memory", "budget"),
			set(fmt.Sprintf("%dMi", minHeapMiB), "spec", "spark", "memory", "minHeap"),
			set(pageCache, "spec", "spark", "memory", "pageCachePercent"),
			set(offHeap, "spec", "spark", "memory", "offHeapPercent"))
		admitErr := a.Admit(context.Background(), obj)
		var invalid *schema.InvalidError
		if admitErr != nil && !errors.As(admitErr, &invalid) {
			t.Fatal(admitErr)
		}
		admitted := admitErr == nil

		var p v1alpha1.AnalyticsPipeline
		raw, _ := json.Marshal(obj)
		if err := json.Unmarshal(raw, &p); err != nil {
			t.Fatal(err)
		}
		_, planErr := plan.Fresh(&p, tiers)
		var fe *plan.FieldError
		noRoom := errors.As(planErr, &fe) && fe.Field == "spec.spark.memory.minHeap"
		if admitted == noRoom {
			t.Fatalf("budget %dMi minHeap %dMi pageCache %d%% offHeap %d%%: admission %v, planner %v",
				budgetMiB, minHeapMiB, pageCache, offHeap, admitErr, planErr)
		}
		if !admitted && !strings.Contains(admitErr.Error(), "leave no room for minHeap") {
			t.Fatalf("rejected for another reason: %v", admitErr)
		}
	}
}
