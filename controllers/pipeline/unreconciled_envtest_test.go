package pipeline_test

import (
	"strings"
	"testing"
	"time"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/controllers"
	"github.com/strata-dev/strata/controllers/internal/envtestutil"
)

// No Strimzi, Spark operator or ECK runs here, as in a namespace none of them watches: once the
// timeout has passed since the children were created, the pipeline says so for each, naming the
// operator and the namespace, without any event from the children to wake it (the reconcile
// looks again by itself when the time is up).
func TestChildrenNoOperatorPicksUp(t *testing.T) {
	o := envtestutil.StartOperatorWith(t, []controllers.Option{controllers.WithUpstreamStatusTimeout(2 * time.Second)})
	ns, _ := o.CreateSamples(t)
	p := &v1alpha1.AnalyticsPipeline{}
	p.Namespace, p.Name = ns, "sensors"
	envtestutil.WaitFor(t, o.C, p, func() error {
		for _, c := range []string{v1alpha1.ConditionKafkaReady, v1alpha1.ConditionSparkReady, v1alpha1.ConditionElasticsearchReady} {
			if err := envtestutil.Condition(p.Status.Conditions, c, "False", v1alpha1.ReasonNotReconciled); err != nil {
				return err
			}
		}
		return nil
	})
	for c, want := range map[string]string{
		v1alpha1.ConditionKafkaReady:         "Strimzi's cluster operator",
		v1alpha1.ConditionSparkReady:         "spark.jobNamespaces",
		v1alpha1.ConditionElasticsearchReady: "managedNamespaces",
	} {
		if m := envtestutil.Meta(p, c).Message; !strings.Contains(m, want) || !strings.Contains(m, `namespace "`+ns+`"`) {
			t.Errorf("%s: %q, want it to name %q and namespace %q", c, m, want, ns)
		}
	}
}
