package plan

import (
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/strata-dev/strata/api/v1alpha1"
)

// Metadata volumes: the KRaft controllers' metadata log and the Elasticsearch masters' cluster
// state are small. On the data tier of a local tier each would take a whole disk (three
// controllers and three masters: six disks for a few GiB), so by default they go on the
// cluster's default StorageClass; spec.kafka.controllers.storage and
// spec.elasticsearch.masters.storage can name a tier instead.

// DefaultMetadataVolumeSize is the size of a metadata volume when the spec gives none: an
// estimate for KRaft metadata and Elasticsearch's cluster state; spec.kafka.controllers.storage.size
// and spec.elasticsearch.masters.storage.size override it.
var DefaultMetadataVolumeSize = resource.MustParse("10Gi")

// defaultMasterNodes is spec.elasticsearch.masterNodes' default (the API's): three masters
// keep a quorum when one is lost.
const defaultMasterNodes = 3

// KRaftQuorum is the KRaft quorum a new cluster of that many brokers gets: three controllers
// survive the loss of one; a single broker has no redundancy to protect. It is chosen once, when
// the cluster is created (Observed.KafkaControllers keeps it afterwards); the plan records it as
// the KafkaController metadata volumes' replicas, which internal/desired.ControllerReplicas reads.
func KRaftQuorum(brokers int32) int32 {
	if brokers <= 1 {
		return 1
	}
	return 3
}

// metadataVolumes plans the two roles' volumes; the placements are those on a tier, for the
// local tier checks.
func metadataVolumes(s *v1alpha1.AnalyticsPipelineSpec, ts tierSet, quorum int32) ([]v1alpha1.MetadataVolume, []placement) {
	var ctrl, master v1alpha1.MetadataStorage
	if s.Kafka.Controllers != nil {
		ctrl = s.Kafka.Controllers.Storage
	}
	if s.Elasticsearch.Masters != nil {
		master = s.Elasticsearch.Masters.Storage
	}
	masters := s.Elasticsearch.MasterNodes
	if masters <= 0 {
		masters = defaultMasterNodes
	}
	type one struct {
		role, field string
		st          v1alpha1.MetadataStorage
		replicas    int32
	}
	var out []v1alpha1.MetadataVolume
	var placed []placement
	for _, m := range []one{
		{v1alpha1.RoleKafkaController, "spec.kafka.controllers.storage.size", ctrl, quorum},
		{v1alpha1.RoleElasticsearchMaster, "spec.elasticsearch.masters.storage.size", master, masters},
	} {
		size := DefaultMetadataVolumeSize.DeepCopy()
		if m.st.Size != nil {
			size = m.st.Size.DeepCopy()
		}
		v := v1alpha1.MetadataVolume{Role: m.role, Tier: m.st.Tier, Size: size, Replicas: m.replicas}
		if t := ts[m.st.Tier]; m.st.Tier != "" && t != nil {
			v.StorageClassName = t.Spec.StorageClassName
			v.Size = claimSize(t, size)
			placed = append(placed, placement{role: m.role, field: m.field, tier: m.st.Tier, size: size, replicas: m.replicas})
		}
		out = append(out, v)
	}
	return out, placed
}
