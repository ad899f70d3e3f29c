package schema_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/strata-dev/strata/internal/schema"
)

const pipelineYAML = `
apiVersion: strata.dev/v1alpha1
kind: AnalyticsPipeline
metadata:
  name: sensors
spec:
  workload: {messagesPerSecond: 10000, messageBytes: 9028}
  network: {linkBitsPerSecond: 1G}
  kafka:
    replicationFactor: 2
    brokers: {min: 2, max: 6}
    storage: {tier: nvme-local, size: 200Gi}
  spark:
    image: registry.example/sensor-job:1.0
    mainApplicationFile: local:///opt/app/job.jar
    executors: {min: 2, max: 10, cores: 5}
    messagesPerSecondPerExecutor: 4000
    memory: {budget: 16Gi}
    shuffle: {spillTier: nvme-local, spillSize: 20Gi}
  elasticsearch:
    dataNodes: {min: 2, max: 6}
    messagesPerSecondPerNode: 8000
    storage: {tier: nvme-local, size: 500Gi}
`

func admission(t testing.TB) *schema.Admission {
	t.Helper()
	a, err := schema.New()
	if err != nil {
		t.Fatalf("compiling the CRDs: %v", err)
	}
	return a
}

func object(t testing.TB, doc string, edits ...func(map[string]any)) map[string]any {
	t.Helper()
	obj, err := schema.DecodeYAML([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range edits {
		e(obj)
	}
	return obj
}

func set(value any, path ...string) func(map[string]any) {
	return func(obj map[string]any) {
		if err := unstructured.SetNestedField(obj, value, path...); err != nil {
			panic(err)
		}
	}
}

func TestAdmitAppliesTheSchemaDefaults(t *testing.T) {
	obj := object(t, pipelineYAML)
	if err := admission(t).Admit(context.Background(), obj); err != nil {
		t.Fatal(err)
	}
	u := unstructured.Unstructured{Object: obj}
	for path, want := range map[string]any{
		"spec.network.efficiencyPercent":        int64(90),
		"spec.network.targetUtilizationPercent": int64(80),
		"spec.spark.memory.pageCachePercent":    int64(20),
		"spec.spark.memory.offHeapPercent":      int64(0),
		"spec.spark.memory.minHeap":             "1Gi",
		"spec.workload.producers":               int64(1),
		"spec.kafka.rackTopologyKey":            "kubernetes.io/hostname",
		"spec.volumeReclaimPolicy":              "Retain",
		"metadata.namespace":                    "default",
	} {
		got, _, _ := unstructured.NestedFieldNoCopy(u.Object, strings.Split(path, ".")...)
		if got != want {
			t.Errorf("%s = %#v, want %#v", path, got, want)
		}
	}
}

func TestAdmitRejectsUnknownFields(t *testing.T) {
	obj := object(t, pipelineYAML, set(int64(3), "spec", "kafka", "brokerz"), set("x", "metadata", "labelz"))
	err := admission(t).Admit(context.Background(), obj)
	var unknown *schema.UnknownFieldsError
	if !errors.As(err, &unknown) {
		t.Fatalf("err = %v, want an UnknownFieldsError", err)
	}
	if want := `AnalyticsPipeline "sensors": strict decoding error: unknown field "metadata.labelz", unknown field "spec.kafka.brokerz"`; err.Error() != want {
		t.Errorf("message\n%s\nwant\n%s", err, want)
	}
}

func TestAdmitValidates(t *testing.T) {
	cases := []struct {
		name  string
		edit  func(map[string]any)
		wants []string
	}{
		{"openapi minimum", set(int64(0), "spec", "workload", "messagesPerSecond"),
			[]string{`spec.workload.messagesPerSecond: Invalid value: 0: spec.workload.messagesPerSecond in body should be greater than or equal to 1`}},
		{"type", set("lots", "spec", "workload", "messageBytes"),
			[]string{`spec.workload.messageBytes: Invalid value: "string"`}},
		{"required", func(o map[string]any) { unstructured.RemoveNestedField(o, "spec", "spark", "executors") },
			[]string{`spec.spark.executors: Required value`}},
		{"cel on a struct", set(int64(7), "spec", "kafka", "replicationFactor"),
			[]string{`spec.kafka.replicationFactor`}},
		{"cel replication", set(int64(3), "spec", "kafka", "replicationFactor"),
			nil},
		{"cel min <= max", set(int64(7), "spec", "kafka", "brokers", "min"),
			[]string{`spec.kafka.brokers: Invalid value: min must be less than or equal to max`}},
		{"cel memory", set("15Gi", "spec", "spark", "memory", "minHeap"),
			[]string{`spec.spark.memory: Invalid value: `, `pageCachePercent and offHeapPercent leave no room for minHeap`}},
		{"cel quantity", set("0", "spec", "network", "linkBitsPerSecond"),
			[]string{`spec.network.linkBitsPerSecond must be greater than 0`}},
		{"huge exponent", set("1e999999999", "spec", "network", "linkBitsPerSecond"),
			[]string{`spec.network.linkBitsPerSecond: Invalid value: "1e999999999": the exponent is too large`}},
		{"name", set("Not_A_Name", "metadata", "name"),
			[]string{`metadata.name: Invalid value: "Not_A_Name"`}},
	}
	a := admission(t)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := a.Admit(context.Background(), object(t, pipelineYAML, c.edit))
			if c.wants == nil {
				if err != nil {
					t.Fatalf("want admitted, got %v", err)
				}
				return
			}
			var invalid *schema.InvalidError
			if !errors.As(err, &invalid) {
				t.Fatalf("err = %v, want an InvalidError", err)
			}
			for _, w := range c.wants {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("message\n%s\nlacks\n%s", err, w)
				}
			}
			if !strings.HasPrefix(err.Error(), `AnalyticsPipeline.strata.dev "`) {
				t.Errorf("message %q is not the API server's", err)
			}
		})
	}
}

func TestAdmitStorageTier(t *testing.T) {
	const tier = `
apiVersion: strata.dev/v1alpha1
kind: StorageTier
metadata: {name: hdd-st1, namespace: ignored}
spec:
  medium: HDD
  storageClassName: st1
  readBytesPerSecond: 500M
  writeBytesPerSecond: 500M
  monthlyPricePerGiB: "0.054"
`
	a := admission(t)
	obj := object(t, tier)
	if err := a.Admit(context.Background(), obj); err != nil {
		t.Fatal(err)
	}
	if ns, _, _ := unstructured.NestedString(obj, "metadata", "namespace"); ns != "" {
		t.Errorf("a cluster-scoped object kept namespace %q", ns)
	}
	err := a.Admit(context.Background(), object(t, tier, set("cheap", "spec", "monthlyPricePerGiB"), set("Tape", "spec", "medium")))
	for _, w := range []string{"spec.monthlyPricePerGiB", "spec.medium: Unsupported value: \"Tape\""} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("err = %v, want it to mention %s", err, w)
		}
	}
}
