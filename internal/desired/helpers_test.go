package desired

import (
	"math"
	"reflect"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/strata-dev/strata/api/v1alpha1"
)

func TestNames(t *testing.T) {
	p := &v1alpha1.AnalyticsPipeline{ObjectMeta: metav1.ObjectMeta{Name: "sensors", Namespace: "analytics"}}
	named := p.DeepCopy()
	named.Spec.Kafka.Topic.Name = "readings"
	for _, tt := range []struct{ name, got, want string }{
		{"KafkaName", KafkaName(p), "sensors"},
		{"BrokerPodPrefix", BrokerPodPrefix(p), "sensors-sensors-broker-"},
		{"BootstrapServers", BootstrapServers(p), "sensors-kafka-bootstrap.analytics.svc:9092"},
		{"TopicName default", TopicName(p), "sensors"},
		{"TopicName set", TopicName(named), "readings"},
		{"KafkaTopicName", KafkaTopicName(named), "sensors"},
		{"KafkaMetricsConfigMapName", KafkaMetricsConfigMapName(p), "sensors-kafka-metrics"},
		{"RebalanceTemplateName", RebalanceTemplateName(p), "sensors-rebalance-template"},
		{"ElasticsearchServiceURL", ElasticsearchServiceURL(p), "https://sensors-es-http.analytics.svc:9200"},
		{"ElasticsearchUserSecretName", ElasticsearchUserSecretName(p), "sensors-ingest-es-user"},
		{"ElasticsearchRolesSecretName", ElasticsearchRolesSecretName(p), "sensors-ingest-es-roles"},
		{"ElasticsearchJobUser", ElasticsearchJobUser(p), "sensors-ingest"},
		{"KafkaUserName", KafkaUserName(p), "sensors-ingest"},
		{"ElasticsearchCASecret", ElasticsearchCASecret(p), "sensors-es-http-certs-public"},
		{"ElasticsearchStatefulSetName", ElasticsearchStatefulSetName(p, "data"), "sensors-es-data"},
	} {
		if tt.got != tt.want {
			t.Errorf("%s = %q, want %q", tt.name, tt.got, tt.want)
		}
	}
}

func TestSparkSize(t *testing.T) {
	for _, tt := range []struct {
		bytes int64
		want  string
	}{
		{0, "0m"},
		{-5, "0m"},
		{1 << 30, "1g"},
		{16 << 30, "16g"},
		{5586 << 20, "5586m"},
		{1536 << 20, "1536m"},
		{1 << 10, "0m"},             // below a MiB: Spark would read 0 too
		{(5586 << 20) + 1, "5586m"}, // rounded down, as Spark does
	} {
		if got := SparkSize(tt.bytes); got != tt.want {
			t.Errorf("SparkSize(%d) = %q, want %q", tt.bytes, got, tt.want)
		}
	}
}

func TestNetworkCapacity(t *testing.T) {
	for _, tt := range []struct {
		bytes int64
		want  string
	}{
		{112500000, "109863KiB/s"}, // 1 Gbit/s at 90 %
		{1125000000, "1098632KiB/s"},
		{1023, "0KiB/s"},
		{0, "0KiB/s"},
		{-1, "0KiB/s"},
	} {
		if got := NetworkCapacity(tt.bytes); got != tt.want {
			t.Errorf("NetworkCapacity(%d) = %q, want %q", tt.bytes, got, tt.want)
		}
	}
}

func TestMergeConf(t *testing.T) {
	for _, tt := range []struct {
		name   string
		layers []map[string]string
		want   map[string]string
	}{
		{"none", nil, map[string]string{}},
		{"nil layers", []map[string]string{nil, nil}, map[string]string{}},
		{"later wins", []map[string]string{{"a": "user", "b": "user"}, {"a": "plan"}},
			map[string]string{"a": "plan", "b": "user"}},
		{"three layers", []map[string]string{{"a": "1", "b": "1", "c": "1"}, {"b": "2", "c": "2"}, {"c": "3"}},
			map[string]string{"a": "1", "b": "2", "c": "3"}},
	} {
		if got := mergeConf(tt.layers...); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: mergeConf = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// TestSparkConfPrecedence: the user's settings survive unless the plan or the pipeline's own
// wiring decides them; typed settings are left to the typed fields.
func TestSparkConfPrecedence(t *testing.T) {
	in := splitTiers(t)
	in.Pipeline.Spec.Spark.SparkConf["spark.memory.offHeap.size"] = "1g"
	in.Pipeline.Spec.Spark.SparkConf["spark.strata.kafka.topic"] = "other"
	conf := SparkConf(in)
	for _, tt := range []struct{ key, want, why string }{
		{"spark.sql.shuffle.partitions", "40", "user setting the plan does not decide"},
		{"spark.memory.offHeap.size", "5585m", "plan wins over user"},
		{"spark.strata.kafka.topic", "sensor-readings", "wiring wins over user"},
		{"spark.dynamicAllocation.enabled", "false", "the plan decides the executor count"},
		{"spark.executor.memory", "", "typed field executor.memory carries it"},
		{"spark.executor.extraJavaOptions", "", "typed field executor.javaOptions carries it"},
	} {
		if got := conf[tt.key]; got != tt.want {
			t.Errorf("%s = %q, want %q (%s)", tt.key, got, tt.want, tt.why)
		}
	}

	// No off-heap in the plan's settings: derived from the plan's off-heap size.
	in = splitTiers(t)
	in.Plan.ExecutorMemory.SparkConf = nil
	conf = SparkConf(in)
	if conf["spark.memory.offHeap.enabled"] != "true" || conf["spark.memory.offHeap.size"] != "5585m" {
		t.Errorf("off-heap not derived from the plan: %q %q",
			conf["spark.memory.offHeap.enabled"], conf["spark.memory.offHeap.size"])
	}
}

func TestExecutorJavaOptions(t *testing.T) {
	for _, tt := range []struct{ user, plan, want string }{
		{"", "", ""},
		{"-Da=b", "", "-Da=b"},
		{"", "-XX:+UseG1GC", "-XX:+UseG1GC"},
		{" -Xmx8g ", "-Xms1g -XX:+UseG1GC", "-Xmx8g -Xms1g -XX:+UseG1GC"}, // the plan's flags come last and win
	} {
		in := splitTiers(t)
		in.Pipeline.Spec.Spark.SparkConf = map[string]string{"spark.executor.extraJavaOptions": tt.user}
		in.Plan.ExecutorMemory.JavaOptions = tt.plan
		if got := ExecutorJavaOptions(in); got != tt.want {
			t.Errorf("ExecutorJavaOptions(%q, %q) = %q, want %q", tt.user, tt.plan, got, tt.want)
		}
	}
}

func TestRebalanceThrottle(t *testing.T) {
	for _, tt := range []struct {
		name                string
		link, receive, send int64
		// ingest over partitions is what one replica is written
		ingest      int64
		partitions  int32
		want, moves int64
	}{
		{"no link rate", 0, 10, 10, 0, 0, 0, DefaultPartitionMovements},
		// The sample: 21 partitions of a 60.19 MB/s ingest each written 2.87 MB/s; half the
		// 52.3 MB/s throttle keeps up with 9 of them at once: Cruise Control's 5.
		{"spare link", 112500000, 60186666, 40000000, 60186666, 21, 52313334, 5},
		{"send is busier", 100, 10, 50, 0, 0, 50, DefaultPartitionMovements},
		{"saturated: floor", 100, 100, 120, 0, 0, 10, DefaultPartitionMovements},
		// A replica written 8 of the link's 100: the floor of 10 would never let its move
		// finish; the throttle is twice it, one move at a time.
		{"a partition written above half the floor", 100, 100, 120, 80, 10, 16, 1},
		// Two moves at once keep half of a 40 throttle for catching up with replicas written 8.
		{"fewer moves at once", 100, 60, 50, 80, 10, 40, 2},
		{"within the link", 100, 100, 120, 600, 10, 100, 1},
	} {
		plan := v1alpha1.Plan{LinkUsableBytesPerSecond: tt.link, BrokerReceiveBytesPerSecond: tt.receive,
			BrokerSendBytesPerSecond: tt.send, IngestBytesPerSecond: tt.ingest, Partitions: tt.partitions}
		if got := RebalanceThrottle(plan); got != tt.want {
			t.Errorf("%s: RebalanceThrottle = %d, want %d", tt.name, got, tt.want)
		}
		if got := RebalanceConcurrency(plan); got != tt.moves {
			t.Errorf("%s: RebalanceConcurrency = %d, want %d", tt.name, got, tt.moves)
		}
	}
}

// TestRebalanceMove: brokers joining take k/to of every old broker's data, received by the k
// of them (fewer senders bound it when more join than there were); brokers leaving hand over all
// of theirs, received by those staying; each at the throttle less the live writes of the moves
// at once, never under a tenth of it.
func TestRebalanceMove(t *testing.T) {
	// A link of 100 with traffic of 60 leaves a throttle of 40; 10 partitions written 80 in all
	// are 8 each, so 2 moves at once (TestRebalanceThrottle) write 16 of it, leaving 24.
	plan := v1alpha1.Plan{LinkUsableBytesPerSecond: 100, BrokerReceiveBytesPerSecond: 60, BrokerSendBytesPerSecond: 50,
		IngestBytesPerSecond: 80, Partitions: 10}
	for _, tt := range []struct {
		name              string
		plan              v1alpha1.Plan
		from, to          int32
		perBroker, ingest float64
		bytes, rate       float64
	}{
		{"one joins two", plan, 2, 3, 90, 80, 60, 24},
		{"three join two: two send", plan, 2, 5, 100, 80, 120, 48},
		{"one of three leaves", plan, 3, 2, 90, 80, 90, 24},
		{"two of four leave", plan, 4, 2, 90, 80, 180, 48},
		{"written faster than the throttle: a tenth of it", plan, 2, 3, 90, 800, 60, 4},
		{"an idle link: all of it", v1alpha1.Plan{LinkUsableBytesPerSecond: 100}, 1, 2, 90, 0, 45, 100},
		{"no link rate: nothing moves", v1alpha1.Plan{}, 1, 2, 90, 0, 45, 0},
		{"no change", plan, 3, 3, 90, 80, 0, 0},
		{"no brokers", plan, 0, 3, 90, 80, 0, 0},
	} {
		bytes, rate := RebalanceMove(tt.plan, tt.from, tt.to, tt.perBroker, tt.ingest)
		if math.Abs(bytes-tt.bytes) > 1e-9 || math.Abs(rate-tt.rate) > 1e-9 {
			t.Errorf("%s: RebalanceMove = %g bytes at %g, want %g at %g", tt.name, bytes, rate, tt.bytes, tt.rate)
		}
	}
}

// TestControllerReplicas: the quorum is the one the plan records (the cluster's, fixed at its
// creation), whatever the brokers; a plan without a record gets the rule for a new cluster.
func TestControllerReplicas(t *testing.T) {
	for brokers, want := range map[int32]int64{0: 1, 1: 1, 2: 3, 3: 3, 12: 3} {
		if got := ControllerReplicas(v1alpha1.Plan{Brokers: brokers}); got != want {
			t.Errorf("ControllerReplicas(%d brokers) = %d, want %d", brokers, got, want)
		}
	}
	for _, tt := range []struct{ brokers, recorded int32 }{{1, 3}, {3, 1}, {6, 1}, {2, 3}} {
		pl := v1alpha1.Plan{Brokers: tt.brokers, MetadataVolumes: []v1alpha1.MetadataVolume{
			{Role: v1alpha1.RoleElasticsearchMaster, Replicas: 5},
			{Role: v1alpha1.RoleKafkaController, Replicas: tt.recorded},
		}}
		if got := ControllerReplicas(pl); got != int64(tt.recorded) {
			t.Errorf("ControllerReplicas(%d brokers, quorum %d recorded) = %d", tt.brokers, tt.recorded, got)
		}
	}
}

// TestCruiseControlFromTwoBrokers: Cruise Control, its rebalance template and the broker
// removal exist only with two brokers or more; the removal only when a broker is to be emptied.
func TestCruiseControlFromTwoBrokers(t *testing.T) {
	for _, tt := range []struct {
		brokers          int32
		empty            []int32
		wantCC, wantRemv bool
	}{{1, nil, false, false}, {1, []int32{4}, false, false}, {2, nil, true, false}, {2, []int32{4}, true, true}, {3, nil, true, false}} {
		in := splitTiers(t)
		in.Plan.Brokers, in.Plan.ReplicationFactor, in.EmptyBrokers = tt.brokers, 1, tt.empty
		_, hasCC, _ := unstructured.NestedMap(Kafka(in).Object, "spec", "cruiseControl")
		if hasCC != tt.wantCC || (RebalanceTemplate(in) != nil) != tt.wantCC || (BrokerRemoval(in) != nil) != tt.wantRemv {
			t.Errorf("%d brokers, emptying %v: cruiseControl %v, template %v, removal %v; want %v, %v, %v", tt.brokers, tt.empty,
				hasCC, RebalanceTemplate(in) != nil, BrokerRemoval(in) != nil, tt.wantCC, tt.wantCC, tt.wantRemv)
		}
	}
}

func TestReplication(t *testing.T) {
	for _, tt := range []struct{ rf, minISR, wantRF, wantMin int32 }{
		{3, 2, 3, 2},
		{0, 0, 1, 1},
		{2, 5, 2, 2}, // never above the replication factor
	} {
		rf, minISR := replication(v1alpha1.Plan{ReplicationFactor: tt.rf, MinInSyncReplicas: tt.minISR})
		if rf != int64(tt.wantRF) || minISR != int64(tt.wantMin) {
			t.Errorf("replication(%d, %d) = %d, %d", tt.rf, tt.minISR, rf, minISR)
		}
	}
}

func TestSparkAppTypeAndZoneAware(t *testing.T) {
	for file, want := range map[string]string{
		"local:///opt/app/job.jar": "Scala", "local:///opt/app/job.py": "Python",
		"s3a://b/job.R": "R", "local:///opt/app/job": "Scala",
	} {
		if got := sparkAppType(v1alpha1.SparkSpec{MainApplicationFile: file}); got != want {
			t.Errorf("sparkAppType(%s) = %s, want %s", file, got, want)
		}
	}
	for key, want := range map[string]bool{
		"kubernetes.io/hostname": false, "topology.kubernetes.io/zone": true,
		"failure-domain.beta.kubernetes.io/zone": true, "example.com/rack": false,
	} {
		if got := zoneAware(key); got != want {
			t.Errorf("zoneAware(%s) = %v, want %v", key, got, want)
		}
	}
}
