package desired

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	k8sschema "k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/internal/controlplane"
	"github.com/strata-dev/strata/internal/plan"
	"github.com/strata-dev/strata/internal/schema"
	"github.com/strata-dev/strata/internal/testutil/gen"
)

// FuzzBuild: for any pipeline that Strata's admission and the planner accept, every builder
// runs without a panic and every object it builds is admitted by the real upstream CRDs
// (Strimzi, Spark operator, ECK, vendored in third_party/upstream-crds), validated offline by
// the API server's own code (internal/schema: unknown fields, OpenAPI, CEL) — the same schemas
// TestDryRunApply submits the golden cases to. The seed corpus is testdata/fuzz/FuzzBuild;
// `make fuzz` runs it for FUZZTIME.
func FuzzBuild(f *testing.F) {
	f.Add(int64(10000), int64(9028), "1G", uint8(2), uint8(6), uint16(10), uint8(5), "16Gi", uint8(25), uint8(50), uint32(0), uint16(0), "sensor-readings", "registry.example/sensor-job:1.0", "spark.sql.shuffle.partitions", "40", "kubernetes.io/hostname", true)
	f.Fuzz(func(t *testing.T, mps, msgBytes int64, link string, bmin, bmax uint8, emax uint16, cores uint8,
		budget string, pageCache, offHeap uint8, partitions uint32, shards uint16,
		topic, image, confKey, confValue, rack string, retain bool) {
		p := splitTiersFixture().pipeline
		s := &p.Spec
		s.Workload.MessagesPerSecond, s.Workload.MessageBytes = mps, msgBytes
		s.Kafka.Brokers = v1alpha1.Range{Min: int32(bmin), Max: int32(bmax)}
		s.Kafka.Topic = v1alpha1.TopicSpec{Name: topic, Partitions: int32(partitions)}
		s.Kafka.RackTopologyKey = rack
		s.Spark.Executors.Max, s.Spark.Executors.Cores = int32(emax), int32(cores)
		s.Spark.Memory.PageCachePercent, s.Spark.Memory.OffHeapPercent = int32(pageCache), int32(offHeap)
		s.Spark.Image = image
		s.Spark.SparkConf = map[string]string{confKey: confValue}
		s.Elasticsearch.Shards = int32(shards)
		s.VolumeReclaimPolicy = "Delete"
		if retain {
			s.VolumeReclaimPolicy = "Retain"
		}
		obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(p)
		if err != nil {
			t.Fatal(err)
		}
		// Quantities as the user writes them (strings), which the planner's Quantity cannot hold
		// when they do not parse.
		_ = unstructured.SetNestedField(obj, link, "spec", "network", "linkBitsPerSecond")
		_ = unstructured.SetNestedField(obj, budget, "spec", "spark", "memory", "budget")
		obj["apiVersion"], obj["kind"] = "strata.dev/v1alpha1", "AnalyticsPipeline"
		strata, upstream := admissions(t)
		if err := strata.Admit(context.Background(), obj); err != nil {
			return // admission refuses it: nothing is built
		}
		admitted := &v1alpha1.AnalyticsPipeline{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj, admitted); err != nil {
			t.Fatalf("an admitted pipeline does not decode: %v", err)
		}
		admitted.UID = p.UID
		planned, err := plan.Fresh(admitted, fuzzTiers())
		if err != nil {
			return // the planner refuses it (PlanValid=False): nothing is built
		}
		for _, u := range All(Inputs{Pipeline: admitted, Plan: planned, Tiers: fuzzTiers()}) {
			gvk := u.GroupVersionKind()
			if !upstream.Knows(gvk) {
				continue // core kinds (the metrics ConfigMap)
			}
			if err := upstream.Admit(context.Background(), u.DeepCopy().Object); err != nil {
				t.Errorf("%s %s built for an accepted pipeline is refused by its CRD: %v", gvk.Kind, u.GetName(), err)
			}
		}
	})
}

func fuzzTiers() []v1alpha1.StorageTier {
	return []v1alpha1.StorageTier{gen.NVMeTier(), gen.HDDTier(gen.SetStorageClass("st1"))}
}

var (
	admissionOnce     sync.Once
	strataAdmission   *schema.Admission
	upstreamAdmission *multiAdmission
	admissionErr      error
)

// multiAdmission admits objects of every vendor's CRDs.
type multiAdmission struct{ vendors []*schema.Admission }

func (m *multiAdmission) Knows(gvk k8sschema.GroupVersionKind) bool {
	for _, a := range m.vendors {
		if a.Knows(gvk) {
			return true
		}
	}
	return false
}

func (m *multiAdmission) Admit(ctx context.Context, obj map[string]any) error {
	gvk := (&unstructured.Unstructured{Object: obj}).GroupVersionKind()
	for _, a := range m.vendors {
		if a.Knows(gvk) {
			return a.Admit(ctx, obj)
		}
	}
	return nil
}

// admissions compiles Strata's and the upstream CRDs once per process.
func admissions(t *testing.T) (*schema.Admission, *multiAdmission) {
	admissionOnce.Do(func() {
		if strataAdmission, admissionErr = schema.New(); admissionErr != nil {
			return
		}
		dirs, err := controlplane.UpstreamCRDDirs()
		if err != nil {
			admissionErr = err
			return
		}
		upstreamAdmission = &multiAdmission{}
		for _, d := range dirs {
			a, err := schema.FromFS(os.DirFS(filepath.Dir(d)), filepath.Base(d))
			if err != nil {
				admissionErr = err
				return
			}
			upstreamAdmission.vendors = append(upstreamAdmission.vendors, a)
		}
	})
	if admissionErr != nil {
		t.Fatal(admissionErr)
	}
	return strataAdmission, upstreamAdmission
}
