package plan_test

import (
	"strings"
	"testing"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/internal/testutil/gen"
)

// TestResources plans the Kafka and Elasticsearch pods' CPU and memory for docs/api.md's
// example and with overrides, and checks that the stage capacities follow the CPU.
func TestResources(t *testing.T) {
	type row struct{ cpu, memory, heap, pageCache string }
	sample := map[string]row{
		// 2 × 112.5 MB/s at 100 MB/s per core: 2.25, rounded up to 2500m; 2Gi heap + 512Mi
		// native + 60 s × 112.5 MB/s of page cache = 8.79Gi, rounded up to 9Gi.
		v1alpha1.RoleKafkaBroker:     {"2500m", "9Gi", "2Gi", "6656Mi"},
		v1alpha1.RoleKafkaController: {"500m", "2Gi", "1Gi", "512Mi"},
		// 8000 docs/s × 9028 B = 72.2 MB/s at 10 MB/s per core: 7.22, so 7500m; 2Gi per core;
		// heap half the memory.
		v1alpha1.RoleElasticsearchData:   {"7500m", "15Gi", "7680Mi", "7680Mi"},
		v1alpha1.RoleElasticsearchMaster: {"500m", "2Gi", "1Gi", "1Gi"},
	}
	cases := []struct {
		name string
		edit func(*v1alpha1.AnalyticsPipeline)
		want map[string]row
		// stages whose capacity the resources set, and words Unsatisfied must contain
		stages      map[string]int64
		unsatisfied []string
	}{
		{"planned", func(*v1alpha1.AnalyticsPipeline) {}, sample,
			// The planned CPU binds nowhere: the link and messagesPerSecondPerNode do.
			map[string]int64{v1alpha1.StageKafkaBrokerNetwork: 18691, v1alpha1.StageElasticsearchIndexing: 16000}, nil},
		{"small memory overrides keep the heap at most half of it", func(p *v1alpha1.AnalyticsPipeline) {
			p.Spec.Kafka.Resources = &v1alpha1.ComputeResources{Memory: qp("1Gi")}
			p.Spec.Elasticsearch.Masters = &v1alpha1.ElasticsearchMastersSpec{Resources: &v1alpha1.ComputeResources{Memory: qp("1Gi")}}
		}, map[string]row{
			v1alpha1.RoleKafkaBroker:         {"2500m", "1Gi", "512Mi", "256Mi"},
			v1alpha1.RoleElasticsearchMaster: {"500m", "1Gi", "512Mi", "512Mi"},
		}, nil, nil},
		{"a large data node's heap stays under the compressed-oops threshold", func(p *v1alpha1.AnalyticsPipeline) {
			p.Spec.Elasticsearch.Resources = &v1alpha1.ComputeResources{Memory: qp("64Gi")}
		}, map[string]row{v1alpha1.RoleElasticsearchData: {"7500m", "64Gi", "26Gi", "38Gi"}}, nil, nil},
		{"a data node CPU below the planned one indexes less", func(p *v1alpha1.AnalyticsPipeline) {
			p.Spec.Elasticsearch.Resources = &v1alpha1.ComputeResources{CPU: qp("2")}
		}, map[string]row{v1alpha1.RoleElasticsearchData: {"2", "15Gi", "7680Mi", "7680Mi"}},
			// 2 cores × 10 MB/s ÷ 9028 B = 2215 docs/s per node; 6 nodes (the max) ÷ 2 copies.
			map[string]int64{v1alpha1.StageElasticsearchIndexing: 6645},
			[]string{"spec.elasticsearch.resources.cpu", "the 2215 per node"}},
		{"a broker CPU below the planned one moves less", func(p *v1alpha1.AnalyticsPipeline) {
			p.Spec.Kafka.Resources = &v1alpha1.ComputeResources{CPU: qp("500m")}
		}, map[string]row{v1alpha1.RoleKafkaBroker: {"500m", "9Gi", "2Gi", "6656Mi"}},
			// 50 MB/s per broker, in and out, for each of 6 brokers (the max) and 24 partitions
			// (20 executor cores rounded up to a multiple of 6): 8 of 48 replicas receive
			// 90.28 MB/s × 8/24 and 4 of 24 leaders send 2 × 90.28 MB/s × 4/24 per 10000
			// records/s. 10 brokers are needed: the partitions would follow them (20 on 10).
			map[string]int64{v1alpha1.StageKafkaBrokerNetwork: 8307},
			[]string{"spec.kafka.resources.cpu", "10 are needed"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := gen.Pipeline(gen.SetProducers(2))
			tc.edit(in)
			p := mustCompute(t, in, gen.APITiers())
			got := map[string]row{}
			for _, r := range p.Resources {
				got[r.Role] = row{r.CPU.String(), r.Memory.String(), r.Heap.String(), r.PageCache.String()}
			}
			if len(got) != 4 {
				t.Errorf("resources for %d roles, want 4: %+v", len(got), p.Resources)
			}
			for role, want := range tc.want {
				if got[role] != want {
					t.Errorf("%s: %+v, want %+v", role, got[role], want)
				}
			}
			for name, want := range tc.stages {
				if c := stageCap(t, p, name); c != want {
					t.Errorf("%s = %d, want %d", name, c, want)
				}
			}
			for _, w := range tc.unsatisfied {
				if !strings.Contains(p.Unsatisfied, w) {
					t.Errorf("unsatisfied %q lacks %q", p.Unsatisfied, w)
				}
			}
			if len(tc.unsatisfied) == 0 && p.Unsatisfied != "" {
				t.Errorf("unsatisfied %q, want none", p.Unsatisfied)
			}
		})
	}
}
