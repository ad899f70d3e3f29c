package upgrade

import (
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

func TestDiff(t *testing.T) {
	before := `
nodeSets:
- name: master
  count: 3
  podTemplate: {spec: {containers: [{name: es, env: [{name: A, value: "1"}]}]}}
driver: {cores: 1, labels: {}}
tolerations: [a, b]
http: {service: {}}
`
	after := `
nodeSets:
- name: master
  count: 3
  podTemplate:
    metadata: {labels: {strata.dev/pipeline: p, strata.dev/workload: es-master}}
    spec: {containers: [{name: es, env: [{name: A, value: "2"}]}]}
driver: {cores: 1, labels: {x: y}}
tolerations: [a]
http: {service: {metadata: {}, spec: {}}, tls: {certificate: {}}}
monitoring: {logs: {}}
`
	want := []string{
		"driver.labels.x",
		"nodeSets[*].podTemplate.metadata.labels[strata.dev/pipeline]",
		"nodeSets[*].podTemplate.metadata.labels[strata.dev/workload]",
		"nodeSets[*].podTemplate.spec.containers[*].env[*].value",
		"tolerations",
	}
	var a, b map[string]any
	if err := yaml.Unmarshal([]byte(before), &a); err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal([]byte(after), &b); err != nil {
		t.Fatal(err)
	}
	if got := Diff(a, b); !reflect.DeepEqual(got, want) {
		t.Errorf("Diff:\n got %q\nwant %q", got, want)
	}
	if got := Diff(a, a); len(got) != 0 {
		t.Errorf("Diff of a map with itself: %q", got)
	}
}

// TestPodSpec: what only scales (a pool's replicas, a node set's count) is left out, the rest
// kept; kinds that make no pods have none.
func TestPodSpec(t *testing.T) {
	es := &unstructured.Unstructured{Object: map[string]any{"kind": "Elasticsearch", "spec": map[string]any{
		"version":  "8.19.0",
		"nodeSets": []any{map[string]any{"name": "data", "count": int64(4)}}}}}
	want := map[string]any{"version": "8.19.0", "nodeSets": []any{map[string]any{"name": "data"}}}
	if got := PodSpec(es); !reflect.DeepEqual(got, want) {
		t.Errorf("Elasticsearch: %v, want %v", got, want)
	}
	if es.Object["spec"].(map[string]any)["nodeSets"].([]any)[0].(map[string]any)["count"] == nil {
		t.Error("PodSpec changed the object it read")
	}
	pool := &unstructured.Unstructured{Object: map[string]any{"kind": "KafkaNodePool", "spec": map[string]any{"replicas": int64(3), "roles": []any{"broker"}}}}
	if got := PodSpec(pool); !reflect.DeepEqual(got, map[string]any{"roles": []any{"broker"}}) {
		t.Errorf("KafkaNodePool: %v", got)
	}
	if got := PodSpec(&unstructured.Unstructured{Object: map[string]any{"kind": "Secret"}}); got != nil {
		t.Errorf("Secret: %v", got)
	}
}
