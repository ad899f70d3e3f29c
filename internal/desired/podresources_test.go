package desired

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestPodResources: the pools and nodeSets carry the plan's resources with memory requested
// and limited alike and the heap as planned; Cruise Control's CPU capacity is the brokers'
// planned CPU; a plan without resources leaves the upstream defaults alone.
func TestPodResources(t *testing.T) {
	in := splitTiers(t)
	str := func(o map[string]any, path ...string) string {
		t.Helper()
		v, _, err := unstructured.NestedString(o, path...)
		if err != nil {
			t.Fatalf("%v: %v", path, err)
		}
		return v
	}
	pools := NodePools(in)
	for _, c := range []struct {
		pool             map[string]any
		cpu, memory, xmx string
	}{
		{pools[0].Object, "500m", "2Gi", "1g"},
		{pools[1].Object, "2500m", "9Gi", "2g"},
	} {
		got := []string{str(c.pool, "spec", "resources", "requests", "cpu"), str(c.pool, "spec", "resources", "requests", "memory"),
			str(c.pool, "spec", "resources", "limits", "memory"), str(c.pool, "spec", "jvmOptions", "-Xms"), str(c.pool, "spec", "jvmOptions", "-Xmx")}
		want := []string{c.cpu, c.memory, c.memory, c.xmx, c.xmx}
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("pool %s: cpu, memory request and limit, -Xms, -Xmx = %v, want %v", str(c.pool, "metadata", "name"), got, want)
				break
			}
		}
		if _, ok, _ := unstructured.NestedString(c.pool, "spec", "resources", "limits", "cpu"); ok {
			t.Errorf("pool %s: a CPU limit, want only a request (Cruise Control reads brokerCapacity.cpu)", str(c.pool, "metadata", "name"))
		}
	}
	if got := str(Kafka(in).Object, "spec", "cruiseControl", "brokerCapacity", "cpu"); got != "2500m" {
		t.Errorf("brokerCapacity.cpu %q, want the brokers' planned 2500m", got)
	}

	sets, _, _ := unstructured.NestedSlice(Elasticsearch(in).Object, "spec", "nodeSets")
	for i, want := range []struct{ cpu, memory, opts string }{
		{"500m", "2Gi", "-Xms1g -Xmx1g"}, {"7500m", "15Gi", "-Xms7680m -Xmx7680m"},
	} {
		cs, _, _ := unstructured.NestedSlice(sets[i].(map[string]any), "podTemplate", "spec", "containers")
		c := cs[0].(map[string]any)
		env, _, _ := unstructured.NestedSlice(c, "env")
		got := []string{str(c, "resources", "requests", "cpu"), str(c, "resources", "limits", "cpu"),
			str(c, "resources", "requests", "memory"), str(c, "resources", "limits", "memory"), str(env[0].(map[string]any), "value")}
		if w := []string{want.cpu, want.cpu, want.memory, want.memory, want.opts}; len(env) != 1 || got[0] != w[0] ||
			got[1] != w[1] || got[2] != w[2] || got[3] != w[3] || got[4] != w[4] {
			t.Errorf("nodeSet %d: cpu request/limit, memory request/limit, ES_JAVA_OPTS = %v, want %v", i, got, w)
		}
	}

	in.Plan.Resources = nil
	if _, ok, _ := unstructured.NestedMap(NodePools(in)[1].Object, "spec", "resources"); ok {
		t.Error("a plan without resources still sets the broker pool's")
	}
	if _, ok, _ := unstructured.NestedString(Kafka(in).Object, "spec", "cruiseControl", "brokerCapacity", "cpu"); ok {
		t.Error("a plan without resources still sets brokerCapacity.cpu")
	}
}
