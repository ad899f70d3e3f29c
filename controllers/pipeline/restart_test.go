package pipeline_test

import (
	"context"
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/controllers/internal/envtestutil"
	"github.com/strata-dev/strata/internal/desired"
)

// TestFieldDroppedAcrossRestart: a field the operator applied and that the desired object no
// longer has is removed from the live object, also when the operator restarted in between and
// remembers nothing of its applies. Here a sparkConf key removed from the pipeline while the
// operator was down: the live SparkApplication still holds everything desired, so only the
// fields the strata field manager owns tell that the key is to go.
func TestFieldDroppedAcrossRestart(t *testing.T) {
	o := envtestutil.StartOperator(t)
	ns, _ := o.CreateSamples(t)
	ctx := context.Background()
	const key = "spark.ui.showConsoleProgress"
	p := &v1alpha1.AnalyticsPipeline{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "sensors"}}
	envtestutil.WaitPlanned(t, o.C, p, func() error { return nil })
	sparkConf := func() (string, bool) {
		app := envtestutil.Child(t, o.C, desired.SparkApplicationGVK, ns, desired.SparkApplicationName(p))
		if app == nil {
			return "", false
		}
		v, ok, _ := unstructured.NestedString(app.Object, "spec", "sparkConf", key)
		return v, ok
	}
	patch := func(value string) {
		t.Helper()
		body := fmt.Sprintf(`{"spec":{"spark":{"sparkConf":{%q:%s}}}}`, key, value)
		if err := o.C.Patch(ctx, p, client.RawPatch("application/merge-patch+json", []byte(body))); err != nil {
			t.Fatal(err)
		}
	}

	patch(`"false"`)
	envtestutil.WaitPlanned(t, o.C, p, func() error {
		if v, ok := sparkConf(); !ok || v != "false" {
			return fmt.Errorf("sparkConf[%s] = %q, %v", key, v, ok)
		}
		return nil
	})

	o.StopManager()
	patch("null") // a merge patch's null removes the key
	o.StartManager(t)
	envtestutil.WaitPlanned(t, o.C, p, func() error {
		if v, ok := sparkConf(); ok {
			return fmt.Errorf("sparkConf[%s] = %q is still on the SparkApplication", key, v)
		}
		return nil
	})
}
