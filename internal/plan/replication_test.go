package plan_test

import (
	"testing"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/internal/plan"
	"github.com/strata-dev/strata/internal/testutil/gen"
)

func ptr[T any](v T) *T { return &v }

// TestMinInSyncReplicas: by default an acknowledged write is on two brokers whenever there are
// two replicas to hold it (R−1, at least 2, at most R); spec.kafka.minInSyncReplicas is the only
// way below that, and is taken as given.
func TestMinInSyncReplicas(t *testing.T) {
	cases := []struct {
		rf       int32
		explicit *int32
		want     int32
	}{
		{rf: 1, want: 1},
		{rf: 2, want: 2},
		{rf: 3, want: 2},
		{rf: 4, want: 3},
		{rf: 5, want: 4},
		{rf: 2, explicit: ptr(int32(1)), want: 1},
		{rf: 3, explicit: ptr(int32(1)), want: 1},
		{rf: 3, explicit: ptr(int32(3)), want: 3},
		{rf: 5, explicit: ptr(int32(2)), want: 2},
	}
	for _, c := range cases {
		p := gen.Pipeline(gen.SetProducers(2))
		p.Spec.Kafka.ReplicationFactor = c.rf
		p.Spec.Kafka.MinInSyncReplicas = c.explicit
		got, err := plan.Fresh(p, gen.APITiers())
		if err != nil {
			t.Fatalf("rf %d, explicit %v: %v", c.rf, c.explicit, err)
		}
		if got.MinInSyncReplicas != c.want {
			t.Errorf("rf %d, explicit %v: min.insync.replicas %d, want %d", c.rf, c.explicit, got.MinInSyncReplicas, c.want)
		}
		if got.MinInSyncReplicas > got.ReplicationFactor {
			t.Errorf("rf %d: min.insync.replicas %d exceeds the replication factor", c.rf, got.MinInSyncReplicas)
		}
	}
}

// TestQuorumFixedAtCreation: a new cluster's quorum follows its brokers (1 for one broker, else
// 3); a running cluster's stays what it is when the brokers cross one, either way.
func TestQuorumFixedAtCreation(t *testing.T) {
	cases := []struct {
		brokers, running, want int32
	}{
		{brokers: 1, want: 1},
		{brokers: 3, want: 3},
		{brokers: 1, running: 3, want: 3},
		{brokers: 3, running: 1, want: 1},
		{brokers: 6, running: 3, want: 3},
	}
	for _, c := range cases {
		p := gen.Pipeline(gen.SetProducers(2))
		p.Spec.Kafka.ReplicationFactor = 1
		p.Spec.Kafka.Brokers = v1alpha1.Range{Min: c.brokers, Max: c.brokers}
		r, err := plan.Compute(p, gen.APITiers(), plan.Observed{KafkaControllers: c.running})
		got := r.Plan
		if err != nil {
			t.Fatal(err)
		}
		var quorum int32
		for _, v := range got.MetadataVolumes {
			if v.Role == v1alpha1.RoleKafkaController {
				quorum = v.Replicas
			}
		}
		if got.Brokers != c.brokers || quorum != c.want {
			t.Errorf("%d brokers, %d controllers running: planned %d brokers, quorum %d; want quorum %d",
				c.brokers, c.running, got.Brokers, quorum, c.want)
		}
	}
}
