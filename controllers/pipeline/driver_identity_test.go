package pipeline_test

import (
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/controllers"
	"github.com/strata-dev/strata/controllers/internal/envtestutil"
	"github.com/strata-dev/strata/internal/desired"
)

// driverAccount returns the ServiceAccount the pipeline's SparkApplication runs its driver as.
func driverAccount(t *testing.T, o *envtestutil.Operator, p *v1alpha1.AnalyticsPipeline) string {
	t.Helper()
	app := envtestutil.Child(t, o.C, desired.SparkApplicationGVK, p.Namespace, desired.SparkApplicationName(p))
	if app == nil {
		return ""
	}
	sa, _, _ := unstructured.NestedString(app.Object, "spec", "driver", "serviceAccount")
	return sa
}

// TestDriverRunsAsThePipelinesServiceAccount: the sample's driver runs as a ServiceAccount of its
// pipeline's own, bound in its namespace to the driver ClusterRole; naming another ServiceAccount
// in spec.spark.serviceAccountName, which this installation does not allow, is refused with
// PlanValid=False naming the field, and changes nothing that runs.
func TestDriverRunsAsThePipelinesServiceAccount(t *testing.T) {
	o := envtestutil.StartOperator(t)
	ns, _ := o.CreateSamples(t)
	p := &v1alpha1.AnalyticsPipeline{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "sensors"}}
	envtestutil.WaitPlanned(t, o.C, p, func() error {
		if sa := driverAccount(t, o, p); sa != "sensors-spark" {
			return fmt.Errorf("driver runs as %q, want sensors-spark", sa)
		}
		return nil
	})
	if envtestutil.Child(t, o.C, desired.ServiceAccountGVK, ns, "sensors-spark") == nil {
		t.Fatal("no ServiceAccount sensors-spark")
	}
	rb := envtestutil.Child(t, o.C, desired.RoleBindingGVK, ns, "sensors-spark")
	if rb == nil {
		t.Fatal("no RoleBinding sensors-spark")
	}
	if role, _, _ := unstructured.NestedString(rb.Object, "roleRef", "name"); role != desired.SparkDriverClusterRole {
		t.Errorf("RoleBinding binds %q, want %s", role, desired.SparkDriverClusterRole)
	}

	envtestutil.UpdateSpec(t, o.C, p, func() { p.Spec.Spark.ServiceAccountName = "job-runner" })
	envtestutil.WaitFor(t, o.C, p, func() error {
		if p.Status.ObservedGeneration != p.Generation {
			return fmt.Errorf("generation %d not observed yet", p.Generation)
		}
		return envtestutil.Condition(p.Status.Conditions, v1alpha1.ConditionPlanValid, metav1.ConditionFalse, v1alpha1.ReasonInvalidSpec)
	})
	if msg := envtestutil.Meta(p, v1alpha1.ConditionPlanValid).Message; !strings.Contains(msg, "spec.spark.serviceAccountName") ||
		!strings.Contains(msg, "spark.allowUserServiceAccounts") {
		t.Errorf("PlanValid %q does not name the field and the chart value that allows it", msg)
	}
	if sa := driverAccount(t, o, p); sa != "sensors-spark" {
		t.Errorf("the refused spec changed the driver's ServiceAccount to %q", sa)
	}
}

// TestUserServiceAccountWhenAllowed: with the installation's consent
// (--allow-user-service-accounts) the driver runs as the ServiceAccount the spec names, and the
// pipeline's own ServiceAccount and RoleBinding are removed.
func TestUserServiceAccountWhenAllowed(t *testing.T) {
	o := envtestutil.StartOperatorWith(t, []controllers.Option{controllers.WithUserServiceAccounts(true)})
	ns, _ := o.CreateSamples(t)
	p := &v1alpha1.AnalyticsPipeline{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "sensors"}}
	envtestutil.WaitPlanned(t, o.C, p, func() error {
		if envtestutil.Child(t, o.C, desired.RoleBindingGVK, ns, "sensors-spark") == nil {
			return fmt.Errorf("no RoleBinding sensors-spark yet")
		}
		return nil
	})
	envtestutil.UpdateSpec(t, o.C, p, func() { p.Spec.Spark.ServiceAccountName = "job-runner" })
	envtestutil.WaitPlanned(t, o.C, p, func() error {
		if sa := driverAccount(t, o, p); sa != "job-runner" {
			return fmt.Errorf("driver runs as %q, want job-runner", sa)
		}
		if envtestutil.Child(t, o.C, desired.ServiceAccountGVK, ns, "sensors-spark") != nil ||
			envtestutil.Child(t, o.C, desired.RoleBindingGVK, ns, "sensors-spark") != nil {
			return fmt.Errorf("the pipeline's own ServiceAccount or RoleBinding is still there")
		}
		return nil
	})
	if c := envtestutil.Meta(p, v1alpha1.ConditionPlanValid); c == nil || c.Reason == v1alpha1.ReasonInvalidSpec {
		t.Errorf("PlanValid %+v: a user ServiceAccount is allowed here", c)
	}
}
