package desired

import (
	"testing"
)

// TestDriverServiceAccount: without spec.spark.serviceAccountName the driver runs as a
// ServiceAccount of the pipeline's own, bound in the pipeline's namespace to the driver
// ClusterRole; with one, the driver runs as it and the operator makes neither object.
func TestDriverServiceAccount(t *testing.T) {
	in := singleTierDelete(t)
	sa, rb := ServiceAccount(in), RoleBinding(in)
	if sa == nil || rb == nil {
		t.Fatal("no ServiceAccount or RoleBinding for a pipeline that names no ServiceAccount")
	}
	if sa.GetName() != "clicks-spark" || sa.GetNamespace() != "web" {
		t.Errorf("ServiceAccount %s/%s", sa.GetNamespace(), sa.GetName())
	}
	if got := field(t, rb, "roleRef", "name"); got != SparkDriverClusterRole {
		t.Errorf("RoleBinding binds %v, want ClusterRole %s", got, SparkDriverClusterRole)
	}
	if got := field(t, rb, "roleRef", "kind"); got != "ClusterRole" {
		t.Errorf("roleRef kind %v", got)
	}
	subject := field(t, rb, "subjects").([]any)[0].(map[string]any)
	if subject["kind"] != "ServiceAccount" || subject["name"] != sa.GetName() || subject["namespace"] != "web" {
		t.Errorf("RoleBinding subject %v, want the driver's ServiceAccount in the pipeline's namespace", subject)
	}
	if got := field(t, SparkApplication(in), "spec", "driver", "serviceAccount"); got != sa.GetName() {
		t.Errorf("driver runs as %v, want %s", got, sa.GetName())
	}
	if _, found := field(t, SparkApplication(in), "spec", "executor").(map[string]any)["serviceAccount"]; found {
		t.Error("the executors get the driver's ServiceAccount; they need no API rights")
	}

	own := splitTiers(t)
	if ServiceAccount(own) != nil || RoleBinding(own) != nil {
		t.Error("a ServiceAccount or RoleBinding for a pipeline that names its own ServiceAccount")
	}
	if got := field(t, SparkApplication(own), "spec", "driver", "serviceAccount"); got != "sensor-job" {
		t.Errorf("driver runs as %v, want the spec's sensor-job", got)
	}
}
