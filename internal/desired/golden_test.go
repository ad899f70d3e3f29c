package desired

import (
	"bytes"
	"fmt"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/strata-dev/strata/internal/testutil"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// goldenName is the file holding one object of a test case.
func goldenName(tc string, u *unstructured.Unstructured) string {
	return fmt.Sprintf("%s.%s-%s.golden.yaml", tc, strings.ToLower(u.GetKind()), u.GetName())
}

// TestGolden compares every object All builds with testdata/<case>.<kind>-<name>.golden.yaml;
// `go test ./internal/desired -update` rewrites them (and removes those no longer built).
func TestGolden(t *testing.T) {
	for _, tc := range testCases(t) {
		t.Run(tc.name, func(t *testing.T) {
			files := map[string][]byte{}
			for _, u := range All(tc.in) {
				got, err := yaml.Marshal(u.Object)
				if err != nil {
					t.Fatal(err)
				}
				files[filepath.Join("testdata", goldenName(tc.name, u))] = got
			}
			testutil.GoldenSet(t, filepath.Join("testdata", tc.name+".*.golden.yaml"), files)
		})
	}
}

// TestDeterministic builds everything twice from separately built inputs: the objects must be
// equal, marshal identically, and be valid unstructured content (DeepCopy panics on Go types
// JSON does not have, such as int32 or []string).
func TestDeterministic(t *testing.T) {
	for i, tc := range testCases(t) {
		a, b := All(tc.in), All(testCases(t)[i].in)
		if !reflect.DeepEqual(a, b) {
			t.Errorf("%s: two builds from equal inputs differ", tc.name)
		}
		for j := range a {
			ya, _ := yaml.Marshal(a[j].Object)
			yb, _ := yaml.Marshal(a[j].DeepCopy().Object)
			if !bytes.Equal(ya, yb) {
				t.Errorf("%s: %s changes when deep-copied", tc.name, a[j].GetName())
			}
		}
	}
}

// TestAllOrderAndKinds pins the apply order: ConfigMap, rebalance template (with Cruise
// Control only), node pools, Kafka, topic, the job's KafkaUser, its Elasticsearch user and role
// Secrets, Elasticsearch, the checkpoint claim (Strata's own
// job only), the driver's ServiceAccount and RoleBinding (unless the spec names its own
// ServiceAccount, as split-tiers does), SparkApplication.
func TestAllOrderAndKinds(t *testing.T) {
	kinds := func(in Inputs) []string {
		var ks []string
		for _, u := range All(in) {
			ks = append(ks, u.GetKind()+"/"+u.GetName())
		}
		return ks
	}
	want := map[string][]string{
		"split-tiers": {"ConfigMap/sensors-kafka-metrics", "KafkaRebalance/sensors-rebalance-template",
			"KafkaNodePool/sensors-controller", "KafkaNodePool/sensors-broker", "Kafka/sensors", "KafkaTopic/sensors",
			"KafkaUser/sensors-ingest", "Secret/sensors-ingest-es-user", "Secret/sensors-ingest-es-roles", "Elasticsearch/sensors",
			"Secret/sensors-ingest-es-keystore", "SparkApplication/sensors"},
		"last-broker-emptying": {"ConfigMap/sensors-kafka-metrics", "KafkaRebalance/sensors-rebalance-template",
			"KafkaRebalance/sensors-remove-brokers", "KafkaNodePool/sensors-controller", "KafkaNodePool/sensors-broker",
			"Kafka/sensors", "KafkaTopic/sensors", "KafkaUser/sensors-ingest", "Secret/sensors-ingest-es-user",
			"Secret/sensors-ingest-es-roles", "Elasticsearch/sensors",
			"Secret/sensors-ingest-es-keystore", "SparkApplication/sensors"},
		"last-broker-leaving": {"ConfigMap/sensors-kafka-metrics", "KafkaNodePool/sensors-controller", "KafkaNodePool/sensors-broker", "Kafka/sensors", "KafkaTopic/sensors",
			"KafkaUser/sensors-ingest", "Secret/sensors-ingest-es-user", "Secret/sensors-ingest-es-roles", "Elasticsearch/sensors",
			"Secret/sensors-ingest-es-keystore", "SparkApplication/sensors"},
		"single-tier-delete": {"ConfigMap/clicks-kafka-metrics", "KafkaNodePool/clicks-controller",
			"KafkaNodePool/clicks-broker", "Kafka/clicks", "KafkaTopic/clicks", "KafkaUser/clicks-ingest",
			"Secret/clicks-ingest-es-user", "Secret/clicks-ingest-es-roles", "Elasticsearch/clicks",
			"Secret/clicks-ingest-es-keystore", "ServiceAccount/clicks-spark", "RoleBinding/clicks-spark", "SparkApplication/clicks"},
		"strata-job": {"ConfigMap/sensors-kafka-metrics", "KafkaRebalance/sensors-rebalance-template",
			"KafkaNodePool/sensors-controller", "KafkaNodePool/sensors-broker", "Kafka/sensors", "KafkaTopic/sensors",
			"KafkaUser/sensors-ingest", "Secret/sensors-ingest-es-user", "Secret/sensors-ingest-es-roles", "Elasticsearch/sensors", "PersistentVolumeClaim/sensors-checkpoint",
			"ConfigMap/sensors-executors", "SparkApplication/sensors"},
	}
	for _, tc := range testCases(t) {
		if got := kinds(tc.in); !reflect.DeepEqual(got, want[tc.name]) {
			t.Errorf("%s: All() = %v, want %v", tc.name, got, want[tc.name])
		}
	}
}

// TestCommonMetadata checks what every child carries: the pipeline's namespace, the five
// app.kubernetes.io labels and the pipeline as controlling owner.
func TestCommonMetadata(t *testing.T) {
	for _, tc := range testCases(t) {
		p := tc.in.Pipeline
		for _, u := range All(tc.in) {
			id := tc.name + " " + u.GetKind() + "/" + u.GetName()
			if u.GetNamespace() != p.Namespace {
				t.Errorf("%s: namespace %q, want %q", id, u.GetNamespace(), p.Namespace)
			}
			l := u.GetLabels()
			var keys []string
			for _, k := range []string{LabelName, LabelInstance, LabelComponent, LabelPartOf, LabelManagedBy} {
				if l[k] == "" {
					keys = append(keys, k)
				}
			}
			sort.Strings(keys)
			if len(keys) > 0 || l[LabelInstance] != p.Name || l[LabelPartOf] != "strata" || l[LabelManagedBy] != "strata" {
				t.Errorf("%s: labels %v (missing %v)", id, l, keys)
			}
			refs := u.GetOwnerReferences()
			if len(refs) != 1 {
				t.Fatalf("%s: %d owner references, want 1", id, len(refs))
			}
			r := refs[0]
			if r.APIVersion != "strata.dev/v1alpha1" || r.Kind != "AnalyticsPipeline" || r.Name != p.Name ||
				r.UID != p.UID || r.Controller == nil || !*r.Controller || r.BlockOwnerDeletion == nil ||
				!*r.BlockOwnerDeletion {
				t.Errorf("%s: owner reference %+v", id, r)
			}
		}
	}
}
