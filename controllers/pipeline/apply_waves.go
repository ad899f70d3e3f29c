package pipeline

import (
	"context"

	"golang.org/x/sync/errgroup"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/strata-dev/strata/internal/desired"
	"github.com/strata-dev/strata/internal/ssa"
)

// A reconcile's applies went one after another, each waiting 60-120 ms for a loaded API
// server's answer: 15 of them made a new pipeline's reconcile take a second or two, and at
// 1,000 pipelines the operator wrote at a third of what the API server took from one client
// (docs/performance.md). The children of one wave do not depend on each other, so a wave's
// applies go at once; the waves keep the order desired.All documents.

// applyConcurrency bounds the applies in flight for one reconcile. With the pipeline workers
// (DefaultPipelineWorkers) it bounds the operator's requests in flight; the API server's
// priority and fairness queues what exceeds its share.
const applyConcurrency = 8

// applyWave is the wave a child kind is applied in. What desired.All puts before another
// is in an earlier wave: the ConfigMap, the rebalance template and the node pools before the
// Kafka; the Elasticsearch user and role Secrets before the Elasticsearch; the Kafka before
// its topic and KafkaUser; the Elasticsearch, the checkpoint claim, the keystore Secret, the
// driver's ServiceAccount and RoleBinding before the SparkApplication.
func applyWave(gvk schema.GroupVersionKind) int {
	switch gvk {
	case desired.KafkaGVK, desired.ElasticsearchGVK:
		return 1
	case desired.KafkaTopicGVK, desired.KafkaUserGVK, desired.SparkApplicationGVK:
		return 2
	default:
		return 0
	}
}

// waves splits objs into their waves, in wave order, each keeping objs' order.
func waves(objs []*unstructured.Unstructured) [][]*unstructured.Unstructured {
	var out [][]*unstructured.Unstructured
	for _, o := range objs {
		w := applyWave(o.GroupVersionKind())
		for len(out) <= w {
			out = append(out, nil)
		}
		out[w] = append(out[w], o)
	}
	return out
}

// applyResult is one child's apply: the object as the server now has it, or the error.
type applyResult struct {
	live *unstructured.Unstructured
	err  error
}

// applyAll applies objs wave after wave, the applies of a wave concurrently (at most
// applyConcurrency at once), and returns each object's result by its index in objs. A refused
// child does not stop the others, nor the later waves: as before, the failure is the child's
// condition and the reconcile is retried (an Elasticsearch applied without its Secrets is what
// a reconcile one after another also did when a Secret's apply failed).
func applyAll(ctx context.Context, applier *ssa.Applier, scope string, objs []*unstructured.Unstructured,
	current func(ssa.Key) *unstructured.Unstructured) []applyResult {
	results := make([]applyResult, len(objs))
	index := map[*unstructured.Unstructured]int{}
	for i, o := range objs {
		index[o] = i
	}
	for _, wave := range waves(objs) {
		var g errgroup.Group
		g.SetLimit(applyConcurrency)
		for _, obj := range wave {
			i, cur := index[obj], current(ssa.KeyOf(obj))
			g.Go(func() error {
				// Each goroutine writes its own element; Wait orders the writes before the reads.
				results[i].live, results[i].err = applier.Apply(ctx, scope, obj, cur)
				return nil
			})
		}
		_ = g.Wait()
	}
	return results
}
