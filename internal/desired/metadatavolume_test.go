package desired

import (
	"testing"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/internal/plan"
)

// The plan counts the KRaft controllers' volumes with its own copy of the quorum rule; the two
// must agree.
func TestControllerCountMatchesThePlan(t *testing.T) {
	in := splitTiers(t)
	tiers := fuzzTiers()
	for _, brokers := range []int32{1, 2, 3, 6} {
		p := in.Pipeline.DeepCopy()
		p.Spec.Kafka.Brokers = v1alpha1.Range{Min: brokers, Max: brokers}
		p.Spec.Kafka.ReplicationFactor = min(brokers, 2)
		p.Spec.Elasticsearch.Storage.Size = q("400Gi")
		pl, err := plan.Fresh(p, tiers)
		if err != nil {
			t.Fatal(err)
		}
		size, class := metadataVolume(pl, v1alpha1.RoleKafkaController, ControllerVolumeSize)
		if int64(pl.MetadataVolumes[0].Replicas) != ControllerReplicas(pl) || class != "" || size.Cmp(ControllerVolumeSize) != 0 {
			t.Errorf("%d brokers: plan %+v, builder %d controllers of %s on %q", brokers, pl.MetadataVolumes[0],
				ControllerReplicas(pl), size.String(), class)
		}
	}
}
