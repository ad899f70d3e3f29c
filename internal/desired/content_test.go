package desired

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/strata-dev/strata/api/v1alpha1"
)

// field reads a nested field, failing the test when it is missing.
func field(t *testing.T, u *unstructured.Unstructured, path ...string) any {
	t.Helper()
	v, ok, err := unstructured.NestedFieldNoCopy(u.Object, path...)
	if err != nil || !ok {
		t.Fatalf("%s/%s: no field %s (%v)", u.GetKind(), u.GetName(), strings.Join(path, "."), err)
	}
	return v
}

func hasField(u *unstructured.Unstructured, path ...string) bool {
	_, ok, _ := unstructured.NestedFieldNoCopy(u.Object, path...)
	return ok
}

func TestNodePools(t *testing.T) {
	for _, tc := range testCases(t) {
		pools := NodePools(tc.in)
		if len(pools) != 2 || pools[0].GetName() != tc.in.Pipeline.Name+"-controller" || pools[1].GetName() != tc.in.Pipeline.Name+"-broker" {
			t.Fatalf("%s: pools %v", tc.name, pools)
		}
		ctrl, broker := pools[0], pools[1]
		if got := field(t, broker, "spec", "replicas"); got != int64(tc.in.Plan.Brokers) {
			t.Errorf("%s: broker replicas %v, want the plan's %d", tc.name, got, tc.in.Plan.Brokers)
		}
		// The quorum the cluster was created with: three for the sensors cases (the
		// last-broker ones keep it with fewer brokers), one for single-tier-delete's one broker.
		wantCtrl := int64(3)
		if tc.name == "single-tier-delete" {
			wantCtrl = 1
		}
		if got := field(t, ctrl, "spec", "replicas"); got != wantCtrl {
			t.Errorf("%s: controller replicas %v, want %d", tc.name, got, wantCtrl)
		}
		log, _ := placement(tc.in.Plan, v1alpha1.RoleKafkaLog)
		for _, pool := range pools {
			if pool.GetLabels()[StrimziClusterLabel] != tc.in.Pipeline.Name {
				t.Errorf("%s: pool %s not joined to the cluster: %v", tc.name, pool.GetName(), pool.GetLabels())
			}
			vol := field(t, pool, "spec", "storage", "volumes").([]any)[0].(map[string]any)
			// Brokers on the log tier; controllers on the cluster's default class (no class).
			var wantClass any = log.StorageClassName
			if pool == ctrl {
				wantClass = nil
			}
			if vol["class"] != wantClass || vol["kraftMetadata"] != "shared" ||
				vol["deleteClaim"] != (tc.in.Pipeline.Spec.VolumeReclaimPolicy == "Delete") {
				t.Errorf("%s: pool %s volume %v", tc.name, pool.GetName(), vol)
			}
		}
		vol := field(t, broker, "spec", "storage", "volumes").([]any)[0].(map[string]any)
		if vol["size"] != log.SizePerReplica.String() {
			t.Errorf("%s: broker volume size %v, want %s", tc.name, vol["size"], log.SizePerReplica.String())
		}
	}
}

func TestKafka(t *testing.T) {
	in := splitTiers(t)
	k := Kafka(in)
	if got := field(t, k, "spec", "cruiseControl", "brokerCapacity", "outboundNetwork"); got != "109863KiB/s" {
		t.Errorf("outbound capacity %v, want 109863KiB/s (112500000 B/s)", got)
	}
	modes := field(t, k, "spec", "cruiseControl", "autoRebalance").([]any)
	if len(modes) != 2 || modes[0].(map[string]any)["mode"] != "add-brokers" ||
		modes[1].(map[string]any)["mode"] != "remove-brokers" {
		t.Errorf("autoRebalance %v", modes)
	}
	if got := field(t, k, "spec", "kafka", "config", "min.insync.replicas"); got != int64(2) {
		t.Errorf("min.insync.replicas %v", got)
	}
	if got := field(t, k, "spec", "kafka", "rack", "topologyKey"); got != "kubernetes.io/hostname" {
		t.Errorf("rack %v", got)
	}
	if field(t, k, "spec", "kafka", "version") != "4.2.0" {
		t.Error("version not passed through")
	}

	single := Kafka(singleTierDelete(t))
	if hasField(single, "spec", "cruiseControl") || RebalanceTemplate(singleTierDelete(t)) != nil {
		t.Error("a single-broker plan must get no Cruise Control (Strimzi rejects it)")
	}
	if hasField(single, "spec", "kafka", "version") {
		t.Error("an unset version must be left to Strimzi")
	}
}

func TestTopic(t *testing.T) {
	in := splitTiers(t)
	topic := Topic(in)
	if field(t, topic, "spec", "topicName") != "sensor-readings" ||
		field(t, topic, "spec", "partitions") != int64(21) || field(t, topic, "spec", "replicas") != int64(2) {
		t.Errorf("topic spec %v", topic.Object["spec"])
	}
	if got := field(t, Topic(singleTierDelete(t)), "spec", "topicName"); got != "clicks" {
		t.Errorf("default topic name %v, want the pipeline's", got)
	}
}

// parseSparkSize reads back what SparkSize writes.
func parseSparkSize(t *testing.T, s string) int64 {
	t.Helper()
	units := map[byte]int64{'m': 1 << 20, 'g': 1 << 30}
	n, err := strconv.ParseInt(s[:len(s)-1], 10, 64)
	if err != nil || units[s[len(s)-1]] == 0 {
		t.Fatalf("bad Spark size %q", s)
	}
	return n * units[s[len(s)-1]]
}

func TestSparkApplicationMemoryIsTheBudget(t *testing.T) {
	for _, tc := range testCases(t) {
		app := SparkApplication(tc.in)
		conf := SparkConf(tc.in)
		pod := parseSparkSize(t, field(t, app, "spec", "executor", "memory").(string)) +
			parseSparkSize(t, field(t, app, "spec", "executor", "memoryOverhead").(string))
		if conf["spark.memory.offHeap.enabled"] == "true" {
			pod += parseSparkSize(t, conf["spark.memory.offHeap.size"])
		}
		// Spark sizes pods in whole MiB.
		if want := tc.in.Plan.ExecutorMemory.Pod.Value() / (1 << 20) * (1 << 20); pod != want {
			t.Errorf("%s: executor pod memory %d, want the budget %d", tc.name, pod, want)
		}
		if got := field(t, app, "spec", "executor", "instances"); got != int64(tc.in.Plan.Executors) {
			t.Errorf("%s: executors %v, want %d", tc.name, got, tc.in.Plan.Executors)
		}
		for _, k := range typedKeys {
			if _, ok := conf[k]; ok {
				t.Errorf("%s: sparkConf repeats the typed setting %s", tc.name, k)
			}
		}
	}
}

func TestSparkShuffleVolumes(t *testing.T) {
	const spill = "spark.kubernetes.executor.volumes.persistentVolumeClaim.spark-local-dir-spill."
	const data = "spark.kubernetes.executor.volumes.persistentVolumeClaim.shuffle-data."

	split := SparkConf(splitTiers(t))
	for k, want := range map[string]string{
		spill + "options.claimName":    "OnDemand",
		spill + "options.storageClass": "strata-nvme-local",
		spill + "options.sizeLimit":    "20Gi",
		spill + "mount.path":           "/var/data/spill",
		spill + "mount.readOnly":       "false",
		data + "options.claimName":     "OnDemand",
		data + "options.storageClass":  "st1",
		data + "options.sizeLimit":     "925Gi", // the plan's claim for the spec's 40Gi: what sustains the executor's writes on st1
		data + "mount.path":            "/var/data/shuffle",
		ShuffleDataDirsConf:            "/var/data/shuffle",
	} {
		if split[k] != want {
			t.Errorf("split tiers: %s = %q, want %q", k, split[k], want)
		}
	}

	single := SparkConf(singleTierDelete(t))
	if single[spill+"options.sizeLimit"] != "40Gi" || single[spill+"options.storageClass"] != "gp3" {
		t.Errorf("one tier: the spill volume must hold spill and data (10Gi+30Gi on gp3): %q %q",
			single[spill+"options.sizeLimit"], single[spill+"options.storageClass"])
	}
	for k := range single {
		if strings.HasPrefix(k, data) || k == ShuffleDataDirsConf {
			t.Errorf("one tier: unexpected %s", k)
		}
	}
}

func TestElasticsearch(t *testing.T) {
	for _, tc := range testCases(t) {
		es := Elasticsearch(tc.in)
		sets := field(t, es, "spec", "nodeSets").([]any)
		master, data := sets[0].(map[string]any), sets[1].(map[string]any)
		if master["name"] != "master" || master["count"] != int64(tc.in.Pipeline.Spec.Elasticsearch.MasterNodes) {
			t.Errorf("%s: master nodeSet %v", tc.name, master)
		}
		if data["name"] != "data" || data["count"] != int64(tc.in.Plan.ElasticsearchDataNodes) {
			t.Errorf("%s: data nodeSet count %v, want the plan's %d", tc.name, data["count"],
				tc.in.Plan.ElasticsearchDataNodes)
		}
		want := "DeleteOnScaledownOnly"
		if tc.in.Pipeline.Spec.VolumeReclaimPolicy == "Delete" {
			want = "DeleteOnScaledownAndClusterDeletion"
		}
		if got := field(t, es, "spec", "volumeClaimDeletePolicy"); got != want {
			t.Errorf("%s: volumeClaimDeletePolicy %v, want %s", tc.name, got, want)
		}
		_, zoned := data["zoneAwareness"]
		if zoned != strings.HasPrefix(tc.in.Pipeline.Spec.Kafka.RackTopologyKey, "topology.kubernetes.io/") {
			t.Errorf("%s: zoneAwareness %v for key %s", tc.name, data["zoneAwareness"],
				tc.in.Pipeline.Spec.Kafka.RackTopologyKey)
		}
		// podTemplate is free-form in the CRD: check it is a valid pod template.
		for _, set := range []map[string]any{master, data} {
			raw, _ := json.Marshal(set["podTemplate"])
			dec := json.NewDecoder(bytes.NewReader(raw))
			dec.DisallowUnknownFields()
			var tmpl corev1.PodTemplateSpec
			if err := dec.Decode(&tmpl); err != nil {
				t.Errorf("%s: nodeSet %s podTemplate: %v", tc.name, set["name"], err)
			}
			// The data nodes over the failure domains, soft (the masters: TestElasticsearchSpread).
			if c := tmpl.Spec.TopologySpreadConstraints; set["name"] == DataNodeSet && (len(c) != 1 ||
				c[0].MaxSkew != 1 || c[0].TopologyKey != tc.in.Pipeline.Spec.Kafka.RackTopologyKey ||
				c[0].WhenUnsatisfiable != corev1.ScheduleAnyway) {
				t.Errorf("%s: nodeSet %s spread %+v", tc.name, set["name"], c)
			}
		}
		claim := data["volumeClaimTemplates"].([]any)[0].(map[string]any)
		d, _ := placement(tc.in.Plan, v1alpha1.RoleElasticsearchData)
		if claim["metadata"].(map[string]any)["name"] != "elasticsearch-data" ||
			claim["spec"].(map[string]any)["storageClassName"] != d.StorageClassName {
			t.Errorf("%s: data claim %v", tc.name, claim)
		}
	}
}
