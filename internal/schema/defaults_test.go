package schema_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/internal/plan"
)

// TestPlanDefaultsFollowTheCRD holds plan.Defaults to the CRD's defaults: a pipeline that sets
// only required fields must come out of plan.Defaults as it comes out of admission, for every
// field the planner reads. A marker changed in api/v1alpha1 without plan.Defaults fails here.
func TestPlanDefaultsFollowTheCRD(t *testing.T) {
	const minimal = `
apiVersion: strata.dev/v1alpha1
kind: AnalyticsPipeline
metadata: {name: minimal}
spec:
  workload: {messagesPerSecond: 10000, messageBytes: 9028}
  network: {linkBitsPerSecond: 1G}
  kafka:
    brokers: {min: 3, max: 6}
    storage: {tier: nvme-local, size: 200Gi}
  spark:
    image: registry.example/job:1.0
    mainApplicationFile: local:///opt/app/job.jar
    executors: {min: 2, max: 10}
    messagesPerSecondPerExecutor: 4000
    memory: {budget: 16Gi, pageCachePercent: 20}
    shuffle: {spillTier: nvme-local, spillSize: 20Gi}
  elasticsearch:
    dataNodes: {min: 2, max: 6}
    messagesPerSecondPerNode: 8000
    storage: {tier: nvme-local, size: 500Gi}
`
	decode := func(obj map[string]any) *v1alpha1.AnalyticsPipeline {
		var p v1alpha1.AnalyticsPipeline
		raw, _ := json.Marshal(obj)
		if err := json.Unmarshal(raw, &p); err != nil {
			t.Fatal(err)
		}
		return &p
	}
	raw := decode(object(t, minimal))
	admitted := object(t, minimal)
	if err := admission(t).Admit(context.Background(), admitted); err != nil {
		t.Fatal(err)
	}
	byServer := decode(admitted)
	byPlan := plan.Defaults(raw)

	// The "empty means" rules are the planner's reading of fields the CRD leaves empty.
	byServer = plan.Defaults(byServer)

	for _, c := range []struct {
		field             string
		fromServer, byPln any
	}{
		{"spec.workload", byServer.Spec.Workload, byPlan.Spec.Workload},
		{"spec.network", byServer.Spec.Network, byPlan.Spec.Network},
		{"spec.kafka.replicationFactor", byServer.Spec.Kafka.ReplicationFactor, byPlan.Spec.Kafka.ReplicationFactor},
		{"spec.kafka.topic.partitions", byServer.Spec.Kafka.Topic.Partitions, byPlan.Spec.Kafka.Topic.Partitions},
		{"spec.spark.executors", byServer.Spec.Spark.Executors, byPlan.Spec.Spark.Executors},
		{"spec.spark.memory", byServer.Spec.Spark.Memory, byPlan.Spec.Spark.Memory},
		{"spec.spark.shuffle", byServer.Spec.Spark.Shuffle, byPlan.Spec.Spark.Shuffle},
		{"spec.elasticsearch.shards", byServer.Spec.Elasticsearch.Shards, byPlan.Spec.Elasticsearch.Shards},
	} {
		a, _ := json.Marshal(c.fromServer)
		b, _ := json.Marshal(c.byPln)
		if string(a) != string(b) {
			t.Errorf("%s: the CRD defaults to %s, plan.Defaults to %s", c.field, a, b)
		}
	}
}
