package prometheus

import (
	"errors"
	"testing"

	client "github.com/prometheus/client_golang/prometheus"

	"github.com/strata-dev/strata/api/v1alpha1"
)

// TestRegisterOnce: Register puts the counter on the registry it is given and a second
// registration is refused, as client_golang refuses any duplicate: importing the package alone
// registers nothing, so the manager's one call is the only one.
func TestRegisterOnce(t *testing.T) {
	reg := client.NewRegistry()
	if err := Register(reg); err != nil {
		t.Fatalf("first registration: %v", err)
	}
	var dup client.AlreadyRegisteredError
	if err := Register(reg); !errors.As(err, &dup) {
		t.Errorf("second registration: %v, want AlreadyRegisteredError", err)
	}
	Count("ns", "sensors", v1alpha1.AutoscalingDecision{Resource: "Brokers", Action: "ScaleUp", Reason: "LinkSaturated"})
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	if len(mfs) != 1 || mfs[0].GetName() != "strata_autoscaler_decisions_total" || len(mfs[0].GetMetric()) == 0 {
		t.Errorf("the registry serves %v, want the decision counted", mfs)
	}
}
