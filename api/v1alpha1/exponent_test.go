package v1alpha1_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// A quantity with a huge decimal exponent is a valid Quantity, and the API server's CEL
// quantity functions expand it to its full digits: on the CRDs before issue 15, one write of
// "1e99999999" cost the API server 95 s of CPU and 378 MB (36 s on the test machine). Every CEL
// rule that reads a quantity now refuses a negative exponent first and bounds the value by its
// approximate float before any exact comparison (bounds.go), so such a write is refused at once.

// hugeExponents are the writes timed: one per kind of quantity field (a plain one with a
// "> 0" rule, and the memory budget, which several object-level rules read).
var hugeExponents = []struct{ name, path string }{
	{"link", "spec.network.linkBitsPerSecond"},
	{"Kafka volume", "spec.kafka.storage.size"},
	{"memory budget", "spec.spark.memory.budget"},
}

const hugeExponent = "1e99999999"

// TestHugeExponentRefusedQuickly writes each field with a huge exponent and asserts that the
// API server refuses it, naming the field, about as fast as it refuses an ordinary bad value of
// that field (the same write took 95 s before). The bound is relative, 2 s plus twenty times the
// ordinary refusal just before it: on a loaded machine both slow down alike, where a fixed bound
// would fail a correct API server.
func TestHugeExponentRefusedQuickly(t *testing.T) {
	warmUp(t)
	for _, tc := range hugeExponents {
		t.Run(tc.name, func(t *testing.T) {
			ordinary, err := refusal(t, tc.path, "-1")
			if err == nil {
				t.Fatalf("%s=-1 accepted", tc.path)
			}
			took, err := refusal(t, tc.path, hugeExponent)
			if err == nil {
				t.Fatalf("%s=%s accepted", tc.path, hugeExponent)
			}
			if !strings.Contains(err.Error(), tc.path) {
				t.Errorf("refused, but the message does not name %s:\n%v", tc.path, err)
			}
			if bound := 2*time.Second + 20*ordinary; took > bound {
				t.Errorf("refusal took %v, want under %v (an ordinary refusal took %v)", took, bound, ordinary)
			}
		})
	}
}

// refusal is how long a dry-run create of the sample pipeline with path set to value takes, and
// the API server's answer.
func refusal(t *testing.T, path, value string) (time.Duration, error) {
	t.Helper()
	u := pipeline(t)
	u.SetName("huge-exponent")
	set(u, path, value)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	start := time.Now()
	err := k8s.Create(ctx, u, client.DryRunAll)
	return time.Since(start), err
}

// BenchmarkHugeExponentWrite reports how long the API server takes to answer a dry-run create
// of a pipeline whose link speed is 1e99999999 (refused, or after 120 s, given up).
func BenchmarkHugeExponentWrite(b *testing.B) {
	warmUp(b)
	u := sample(&testing.T{}, "AnalyticsPipeline", "sensors")
	u.SetName("huge-exponent")
	set(u, "spec.network.linkBitsPerSecond", hugeExponent)
	for b.Loop() {
		ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
		err := k8s.Create(ctx, u.DeepCopy(), client.DryRunAll)
		cancel()
		if err == nil {
			b.Log("accepted")
		}
	}
}

// warmUp makes one valid dry-run write first: the API server builds a CRD's handler (and
// compiles its CEL rules) on the first request for it, which is not what is being timed.
func warmUp(tb testing.TB) {
	tb.Helper()
	u := sample(&testing.T{}, "AnalyticsPipeline", "sensors")
	u.SetName("warm-up")
	if err := k8s.Create(context.Background(), u, client.DryRunAll); err != nil {
		tb.Fatalf("the sample pipeline is refused: %v", err)
	}
}
