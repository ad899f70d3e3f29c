package desired

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestExecutorTarget: Strata's job in the operator's image gets a ConfigMap holding the plan's
// executor count and the key naming it; the SparkApplication keeps the count it runs with, so
// that a change of the plan's count changes only the ConfigMap. A job of the user's, or an image
// the user names, is resubmitted with the new count as before.
func TestExecutorTarget(t *testing.T) {
	for _, tc := range []struct {
		name      string
		image     string
		userJob   bool
		submitted int32
		planned   int32
		// want: the ConfigMap's count ("" for none), the key's value, the SparkApplication's.
		wantTarget, wantKey string
		wantInstances       int64
	}{
		{name: "new job: submitted with the plan's count", planned: 4,
			wantTarget: "4", wantKey: "sensors-executors", wantInstances: 4},
		{name: "running job: the target moves, the application stays", submitted: 2, planned: 6,
			wantTarget: "6", wantKey: "sensors-executors", wantInstances: 2},
		{name: "running job scaled down", submitted: 6, planned: 3,
			wantTarget: "3", wantKey: "sensors-executors", wantInstances: 6},
		{name: "an image the user names: resubmitted", image: "registry.example/strata-ingest:0.9", submitted: 2, planned: 6,
			wantInstances: 6},
		{name: "a job of the user's: resubmitted", userJob: true, submitted: 2, planned: 6,
			wantInstances: 6},
		{name: "a plan of no executors yet", planned: 0,
			wantTarget: "1", wantKey: "sensors-executors", wantInstances: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := strataJob(t)
			in.Pipeline.Spec.Spark.Image = tc.image
			if tc.userJob {
				in.Pipeline.Spec.Spark.MainApplicationFile, in.Pipeline.Spec.Spark.MainClass = "local:///opt/job.jar", "com.example.Job"
			}
			in.SubmittedExecutors, in.Plan.Executors = tc.submitted, tc.planned

			cm := ExecutorTarget(in)
			switch {
			case tc.wantTarget == "" && cm != nil:
				t.Errorf("ExecutorTarget = %v, want none", cm.Object)
			case tc.wantTarget != "":
				if cm == nil {
					t.Fatal("ExecutorTarget = nil, want a ConfigMap")
				}
				got, _, _ := unstructured.NestedString(cm.Object, "data", ExecutorsKey)
				if got != tc.wantTarget || cm.GetName() != tc.wantKey {
					t.Errorf("ConfigMap %s holds %s=%q, want %s holding %q", cm.GetName(), ExecutorsKey, got, tc.wantKey, tc.wantTarget)
				}
			}
			if got := SparkConf(in)[ExecutorsConfigMapConf]; got != tc.wantKey {
				t.Errorf("%s = %q, want %q", ExecutorsConfigMapConf, got, tc.wantKey)
			}
			got, _, _ := unstructured.NestedInt64(SparkApplication(in).Object, "spec", "executor", "instances")
			if got != tc.wantInstances {
				t.Errorf("executor.instances = %d, want %d", got, tc.wantInstances)
			}
		})
	}
}

// TestExecutorTargetKeepsTheApplication: with the job running, every executor count the
// autoscaler may set leaves the SparkApplication as it is (the Spark operator resubmits on any
// change of it) and changes the ConfigMap.
func TestExecutorTargetKeepsTheApplication(t *testing.T) {
	in := strataJob(t)
	in.SubmittedExecutors = in.Plan.Executors
	before := SparkApplication(in)
	for n := int32(1); n <= in.Pipeline.Spec.Spark.Executors.Max; n++ {
		in.Plan.Executors = n
		after := SparkApplication(in)
		if !equality.Semantic.DeepEqual(before.Object, after.Object) {
			t.Fatalf("%d executors changed the SparkApplication", n)
		}
		if got, _, _ := unstructured.NestedString(ExecutorTarget(in).Object, "data", ExecutorsKey); got != itoa(int64(n)) {
			t.Fatalf("%d executors: the target holds %q", n, got)
		}
	}
}
