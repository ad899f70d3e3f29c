package desired

import (
	"strconv"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/strata-dev/strata/api/v1alpha1"
)

// The executor target: how Strata's ingestion job changes its executor count without being
// submitted again. The Spark operator deletes the driver and submits the application again on
// any change of its spec but suspend and timeToLiveSeconds (kubeflow/spark-operator v2.5.2,
// internal/controller/sparkapplication/event_filter.go, EventFilter.Update: the state is set to
// INVALIDATING; its PartialRestart gate spares only executor scheduling fields the webhook
// patches), executor.instances included, and the job reads nothing for the minute that takes. Strata's job instead follows a target the operator
// publishes in a ConfigMap of the pipeline's, read by the driver through the API server
// (jvm/ingest-job ExecutorScaler), which asks Spark's Kubernetes scheduler for that many
// executors (SparkContext.requestTotalExecutors, killExecutors: apache/spark v4.0.2,
// ExecutorPodsAllocator creates and deletes the pods). docs/ingest-job.md, "Executors changed in
// place".
const (
	// ExecutorsConfigMapConf names the ConfigMap to the job (IngestConf's
	// spark.strata.executors.configMap).
	ExecutorsConfigMapConf = "spark.strata.executors.configMap"
	// ExecutorsKey is the ConfigMap's key holding the count (ConfigMapTarget.KEY).
	ExecutorsKey = "executors"
	// ComponentExecutorTarget is the ConfigMap's LabelComponent.
	ComponentExecutorTarget = "executor-target"
)

// ScalesExecutorsInPlace says whether p's job changes its executors in place: Strata's own job in
// the operator's own image (spec.spark.image empty), of the operator's version. A job of the
// user's cannot read the target, and an image the user names may hold an older job, which
// refuses the spark.strata.* key it does not know: those are submitted again on a change, as
// before.
func ScalesExecutorsInPlace(p *v1alpha1.AnalyticsPipeline) bool {
	return RunsIngestJob(p) && p.Spec.Spark.Image == ""
}

// ExecutorsConfigMapName is the name of p's executor target ConfigMap.
func ExecutorsConfigMapName(p *v1alpha1.AnalyticsPipeline) string { return p.Name + "-executors" }

// ExecutorTarget builds the ConfigMap (v1) holding the plan's executor count for p's job, or nil
// when the job does not scale in place.
func ExecutorTarget(in Inputs) *unstructured.Unstructured {
	p := in.Pipeline
	if !ScalesExecutorsInPlace(p) {
		return nil
	}
	return newObject(ConfigMapGVK, p, ExecutorsConfigMapName(p), AppSpark, ComponentExecutorTarget, nil, nil,
		object{"data": map[string]string{ExecutorsKey: strconv.Itoa(int(executorCount(in.Plan)))}})
}

// executorCount is the plan's executor count, at least one.
func executorCount(pl v1alpha1.Plan) int64 { return max(int64(pl.Executors), 1) }

// submittedExecutors is the SparkApplication's executor.instances: the plan's count, except for a
// job that scales in place and already runs, which keeps the count it was submitted with
// (Inputs.SubmittedExecutors, which the controller leaves 0 when the SparkApplication changes
// anyway) so that the operator does not submit it again for what it does itself.
func submittedExecutors(in Inputs) int64 {
	if in.SubmittedExecutors > 0 && ScalesExecutorsInPlace(in.Pipeline) {
		return int64(in.SubmittedExecutors)
	}
	return executorCount(in.Plan)
}
