package autoscale

import (
	"reflect"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// The True conditions are read with their message and time, in Strimzi's order; False ones, ones
// without a type and times that are no time are left out.
func TestRebalanceConditions(t *testing.T) {
	at := time.Date(2026, 11, 28, 9, 58, 0, 0, time.UTC)
	rb := func(conds ...any) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"status": map[string]any{"conditions": conds}}}
	}
	cond := func(typ, status, msg, when string) map[string]any {
		return map[string]any{"type": typ, "status": status, "message": msg, "lastTransitionTime": when}
	}
	cases := []struct {
		name  string
		rb    *unstructured.Unstructured
		want  []RebalanceCondition
		ready bool
	}{
		{"no status yet", &unstructured.Unstructured{Object: map[string]any{}}, nil, false},
		{"NotReady with Strimzi's message", rb(cond("NotReady", "True", "Kafka cluster is not Ready", "2026-11-28T09:58:00Z")),
			[]RebalanceCondition{{Type: "NotReady", Message: "Kafka cluster is not Ready", Since: at}}, false},
		{"Ready, a False one beside it", rb(cond("Rebalancing", "False", "", ""), cond("Ready", "True", "", "2026-11-28T09:58:00Z")),
			[]RebalanceCondition{{Type: "Ready", Since: at}}, true},
		{"a time that is no time", rb(cond("Stopped", "True", "", "soon")), []RebalanceCondition{{Type: "Stopped"}}, false},
		{"no type", rb(cond("", "True", "", "")), nil, false},
	}
	for _, c := range cases {
		if got := RebalanceConditions(c.rb); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
		if got := RebalanceReady(c.rb); got != c.ready {
			t.Errorf("%s: ready %v, want %v", c.name, got, c.ready)
		}
	}
	for typ, ended := range map[string]bool{"NotReady": true, "Stopped": true, "Rebalancing": false, "Ready": false, "New": false} {
		if got := (RebalanceCondition{Type: typ}).Ended(); got != ended {
			t.Errorf("%s: ended %v, want %v", typ, got, ended)
		}
	}
}
