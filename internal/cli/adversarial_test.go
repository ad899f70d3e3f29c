package cli_test

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
	"unicode/utf16"

	"github.com/strata-dev/strata/internal/cli"
)

// Issue 15 tried 109 adversarial inputs through `strata plan`. This is that list as far as it
// can be reconstructed, and more: each must be refused (exit 1), with a message naming the
// field (or, for what is not a field, the document or file), quickly, and without a panic.

type adversarial struct {
	name string
	// file is "pipeline" (testdata/sensors.yaml edited), "tiers" (testdata/tiers.yaml edited)
	// or "raw" (content is the whole file).
	file     string
	old, new string
	content  string
	want     string
}

// quantityFields are the quantity fields of the test files, by the line that sets them.
var quantityFields = []struct {
	file, line, key, field string
	// tiny says whether a tiny positive value (0.5, 1m) is out of range for the field.
	tiny bool
}{
	{"pipeline", "linkBitsPerSecond: 1G", "linkBitsPerSecond", "spec.network.linkBitsPerSecond", false},
	{"pipeline", "size: 200Gi", "size", "spec.kafka.storage.size", true},
	{"pipeline", "size: 400Gi", "size", "spec.elasticsearch.storage.size", true},
	{"pipeline", "spillSize: 20Gi", "spillSize", "spec.spark.shuffle.spillSize", true},
	{"pipeline", "dataSize: 40Gi", "dataSize", "spec.spark.shuffle.dataSize", true},
	{"pipeline", "budget: 16Gi", "budget", "spec.spark.memory.budget", true},
	{"pipeline", "minHeap: 2Gi", "minHeap", "spec.spark.memory.minHeap", true},
	{"tiers", "readBytesPerSecond: 800M", "readBytesPerSecond", "spec.readBytesPerSecond", false},
	{"tiers", "writeBytesPerSecond: 700M", "writeBytesPerSecond", "spec.writeBytesPerSecond", false},
	{"tiers", "capacityPerPath: 400Gi", "capacityPerPath", "spec.local.capacityPerPath", false},
}

func adversarialInputs() []adversarial {
	var cases []adversarial
	bad := []string{"1e99999999", "1e-99999999", "9e999", "1e30", "8Ei", "0", "-1Gi", "fast", `""`, ".nan", ".inf", "-.inf", "010000", "[1]", "{a: 1}", "true", `"1 Gi"`}
	for _, f := range quantityFields {
		values := bad
		if f.tiny {
			values = append(append([]string{}, bad...), "0.5", "1m")
		}
		for _, v := range values {
			cases = append(cases, adversarial{name: f.field + "=" + v, file: f.file, old: f.line, new: f.key + ": " + v, want: f.field})
		}
	}
	// The image is absent from the file (Strata's job): the image cases add one before this line.
	const sv = `sparkVersion: "4.0.2"`
	p := func(name, old, new, want string) adversarial {
		return adversarial{name: name, file: "pipeline", old: old, new: new, want: want}
	}
	cases = append(cases,
		p("octal ingest", "messagesPerSecond: 10000", "messagesPerSecond: 010000", "spec.workload.messagesPerSecond"),
		p("octal-looking 09", "messagesPerSecond: 10000", "messagesPerSecond: 09", "spec.workload.messagesPerSecond"),
		p("NaN record size", "messageBytes: 9028", "messageBytes: .nan", "spec.workload.messageBytes"),
		p("infinite record size", "messageBytes: 9028", "messageBytes: .inf", "spec.workload.messageBytes"),
		p("float ingest", "messagesPerSecond: 10000", "messagesPerSecond: 10000.5", "spec.workload.messagesPerSecond"),
		p("ingest above int64", "messagesPerSecond: 10000", "messagesPerSecond: 99999999999999999999", "spec.workload.messagesPerSecond"),
		p("string ingest", "messagesPerSecond: 10000", `messagesPerSecond: "ten"`, "spec.workload.messagesPerSecond"),
		p("automatic partitions 2,560,000", "executors: {min: 2, max: 10, cores: 5}", "executors: {min: 2, max: 10000, cores: 256}", "spec.kafka.topic.partitions"),
		p("partitions above 100000", "partitions: 0}", "partitions: 100001}", "spec.kafka.topic.partitions"),
		p("rack key with spaces", "rackTopologyKey: kubernetes.io/hostname", "rackTopologyKey: not a label key", "spec.kafka.rackTopologyKey"),
		p("rack key with two slashes", "rackTopologyKey: kubernetes.io/hostname", "rackTopologyKey: a/b/c", "spec.kafka.rackTopologyKey"),
		p("Kafka 99.99.99", `version: "4.2.0"`, `version: "99.99.99"`, "spec.kafka.version"),
		p("Kafka 4.1.0 (Strimzi 1.2.0 no longer runs it)", `version: "4.2.0"`, `version: "4.1.0"`, "spec.kafka.version"),
		p("garbage image", sv, "image: '::garbage::'\n    "+sv, "spec.spark.image"),
		p("image with spaces", sv, "image: 'my image'\n    "+sv, "spec.spark.image"),
		p("image tag too long", sv, "image: registry.example/job:"+strings.Repeat("t", 129)+"\n    "+sv, "spec.spark.image"),
		p("Prometheus URL with user:password", "prometheusURL: http://prometheus-operated.monitoring:9090", "prometheusURL: http://admin:secret@prometheus:9090", "spec.autoscaling.prometheusURL"),
		p("Prometheus URL unparseable", "prometheusURL: http://prometheus-operated.monitoring:9090", "prometheusURL: 'http://[::1'", "spec.autoscaling.prometheusURL"),
		p("Prometheus URL gopher", "prometheusURL: http://prometheus-operated.monitoring:9090", "prometheusURL: gopher://prometheus:70", "spec.autoscaling.prometheusURL"),
		p("Prometheus URL without host", "prometheusURL: http://prometheus-operated.monitoring:9090", "prometheusURL: 'http:///api'", "spec.autoscaling.prometheusURL"),
		p("Prometheus URL too long", "prometheusURL: http://prometheus-operated.monitoring:9090", "prometheusURL: http://p/"+strings.Repeat("x", 2048), "spec.autoscaling.prometheusURL"),
		p("unparseable PromQL override", "scaleDownStabilizationSeconds: 300", "scaleDownStabilizationSeconds: 300\n    queries: {consumerLag: 'sum(rate(x[5m]'}", "spec.autoscaling.queries.consumerLag"),
		p("sparkConf value of 50 KB", sv, "sparkConf: {spark.x: "+strings.Repeat("x", 50_000)+"}\n    "+sv, "spec.spark.sparkConf"),
		p("sparkConf of 300 settings", sv, "sparkConf: {"+settings(300)+"}\n    "+sv, "spec.spark.sparkConf"),
		p("argument of 50 KB", sv, "arguments: ["+strings.Repeat("a", 50_000)+"]\n    "+sv, "spec.spark.arguments[0]"),
		p("300 arguments", sv, "arguments: ["+strings.TrimSuffix(strings.Repeat("a, ", 300), ", ")+"]\n    "+sv, "spec.spark.arguments"),
		p("main class of 2 KB", sv, "mainApplicationFile: local:///opt/app/job.jar\n    mainClass: "+strings.Repeat("c", 2048)+"\n    "+sv, "spec.spark.mainClass"),
		p("service account not a name", sv, "serviceAccountName: 'Driver SA'\n    "+sv, "spec.spark.serviceAccountName"),
		p("Spark version of 1 KB", `sparkVersion: "4.0.2"`, "sparkVersion: "+strings.Repeat("4", 1024), "spec.spark.sparkVersion"),
		p("Elasticsearch version of 1 KB", `version: "8.19.0"`, "version: "+strings.Repeat("8", 1024), "spec.elasticsearch.version"),
		p("topic name with spaces", "topic: {name: sensors", "topic: {name: 'my topic'", "spec.kafka.topic.name"),
		p("negative shards", "shards: 0", "shards: -1", "spec.elasticsearch.shards"),
		p("even masters", "shards: 0", "shards: 0\n    masterNodes: 2", "spec.elasticsearch.masterNodes"),
		p("unknown reclaim policy", "  workload:", "  volumeReclaimPolicy: Keep\n  workload:", "spec.volumeReclaimPolicy"),
		p("misspelt field", "replicationFactor: 2", "replicationFactr: 2", `unknown field "spec.kafka.replicationFactr"`),
		p("name too long", "name: sensors", "name: "+strings.Repeat("s", 24), "metadata.name"),
		p("name not DNS", "name: sensors", "name: Sensors_1", "metadata.name"),
		p("duplicate key", "producers: 1", "producers: 1\n    producers: 2", `"producers" already set`),
		p("key of 1 MB", "producers: 1", strings.Repeat("k", 1<<20)+": 1", "a key longer than 1024 characters"),
		p("key of 2000 characters in flow", "producers: 1", "producers: 1\n    {"+strings.Repeat("k", 2000)+": 1}: 2", "line"),
		p("tab indentation", "    producers: 1", "\tproducers: 1", "line"),
		p("anchor bomb", "  workload:", "  x: &a [1,1,1,1,1,1,1,1,1]\n  y: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\n  z: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\n  workload:", `unknown field`),
		p("kind missing", "kind: AnalyticsPipeline", "", "not a Strata object"),
		p("apiVersion wrong", "apiVersion: strata.dev/v1alpha1", "apiVersion: strata.dev/v1", "not a Strata object"),
		p("replication above brokers.max", "replicationFactor: 2\n    brokers: {min: 2, max: 6}", "replicationFactor: 5\n    brokers: {min: 1, max: 3}", "spec.kafka.replicationFactor"),
	)
	t := func(name, old, new, want string) adversarial {
		return adversarial{name: name, file: "tiers", old: old, new: new, want: want}
	}
	cases = append(cases,
		t("list in the third document", `monthlyPricePerGiB: "0.054"`, "monthlyPricePerGiB: \"0.054\"\n---\n- a", "at document 3 of"),
		t("selector operator Near", "matchLabels: {strata.dev/nvme: \"true\"}", "matchExpressions: [{key: disk, operator: Near, values: [nvme]}]", "spec.local.nodeSelector"),
		t("selector In without values", "matchLabels: {strata.dev/nvme: \"true\"}", "matchExpressions: [{key: disk, operator: In}]", "spec.local.nodeSelector"),
		t("selector Exists with values", "matchLabels: {strata.dev/nvme: \"true\"}", "matchExpressions: [{key: disk, operator: Exists, values: [x]}]", "spec.local.nodeSelector"),
		t("relative path", `paths: ["/mnt/nvme0"]`, `paths: ["mnt/nvme0"]`, "spec.local.paths"),
		t("33 paths", `paths: ["/mnt/nvme0"]`, "paths: ["+paths(33)+"]", "spec.local.paths"),
		t("price as a float", `monthlyPricePerGiB: "0.216"`, "monthlyPricePerGiB: 0.216", "spec.monthlyPricePerGiB"),
		t("price of 1e3", `monthlyPricePerGiB: "0.216"`, `monthlyPricePerGiB: "1e3"`, "spec.monthlyPricePerGiB"),
		t("medium Tape", "medium: NVMe", "medium: Tape", "spec.medium"),
		t("class not a name", "storageClassName: strata-nvme-local", "storageClassName: Strata Local", "spec.storageClassName"),
	)
	raw := func(name, content, want string) adversarial {
		return adversarial{name: name, file: "raw", content: content, want: want}
	}
	cases = append(cases,
		raw("scalar document", "just a string\n", "expected a mapping (an AnalyticsPipeline or StorageTier object) at document 1 of"),
		raw("number document", "42\n", "expected a mapping"),
		raw("list document", "- a\n- b\n", "expected a mapping (an AnalyticsPipeline or StorageTier object) at document 1 of"),
		raw("UTF-16 document", utf16LE("apiVersion: strata.dev/v1alpha1\nkind: StorageTier\n"), "UTF-16"),
		raw("UTF-16 without BOM", string(utf16NoBOM("kind: StorageTier\n")), "UTF-16"),
		raw("Latin-1 document", "kind: StorageTier\nmetadata: {name: caf\xe9}\n", "not valid UTF-8"),
		raw("over 3 MiB", "# "+strings.Repeat("x", 3<<20)+"\n", "more than 3 MiB"),
		raw("empty file", "", "no AnalyticsPipeline"),
		raw("only comments", "# nothing\n", "no AnalyticsPipeline"),
		raw("unclosed flow mapping", "spec: {a: 1\n", "line"),
	)
	return cases
}

func settings(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "spark.s%d: v, ", i)
	}
	return strings.TrimSuffix(b.String(), ", ")
}

func paths(n int) string {
	var p []string
	for i := range n {
		p = append(p, fmt.Sprintf(`"/mnt/d%d"`, i))
	}
	return strings.Join(p, ", ")
}

func utf16LE(s string) string {
	b := []byte{0xFF, 0xFE}
	for _, u := range utf16.Encode([]rune(s)) {
		b = append(b, byte(u), byte(u>>8))
	}
	return string(b)
}

func utf16NoBOM(s string) []byte { return []byte(utf16LE(s))[2:] }

// TestAdversarialInputs runs every input through `strata plan` and counts the outcomes the
// issue's report asks for.
func TestAdversarialInputs(t *testing.T) {
	cases := adversarialInputs()
	if len(cases) < 109 {
		t.Fatalf("%d adversarial inputs, want at least the issue's 109", len(cases))
	}
	pipelineText, _ := os.ReadFile("testdata/sensors.yaml")
	tiersText, _ := os.ReadFile("testdata/tiers.yaml")
	refused, unclear := 0, 0
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			pipeline, tiers := string(pipelineText), string(tiersText)
			var args []string
			switch c.file {
			case "pipeline":
				if !strings.Contains(pipeline, c.old) {
					t.Fatalf("testdata/sensors.yaml has no %q", c.old)
				}
				args = []string{"-f", writeTemp(t, strings.Replace(pipeline, c.old, c.new, 1)), "-f", "testdata/tiers.yaml"}
			case "tiers":
				if !strings.Contains(tiers, c.old) {
					t.Fatalf("testdata/tiers.yaml has no %q", c.old)
				}
				args = []string{"-f", "testdata/sensors.yaml", "-f", writeTemp(t, strings.Replace(tiers, c.old, c.new, 1))}
			default:
				args = []string{"-f", writeTemp(t, c.content)}
			}
			start := time.Now()
			r := run(t, "", append([]string{"plan"}, args...)...) // a panic fails the test
			if took := time.Since(start); took > 5*time.Second {
				t.Errorf("took %v", took)
			}
			if r.code != cli.ExitError {
				t.Fatalf("exit %d, want %d (refused); stdout:\n%.500s", r.code, cli.ExitError, r.stdout)
			}
			if !strings.Contains(r.stderr, c.want) {
				unclear++
				t.Errorf("refused, but the message does not name %q:\n%.2000s", c.want, r.stderr)
				return
			}
			refused++
		})
	}
	t.Logf("adversarial inputs: %d tried, %d refused naming the field or document, %d unclear, 0 panics", len(cases), refused, unclear)
}

// TestInputLimit checks that the CLI stops reading at the API server's request limit, for a
// device that never ends and for stdin.
func TestInputLimit(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err == nil {
		start := time.Now()
		r := run(t, "", "plan", "-f", "/dev/zero")
		if r.code != cli.ExitError || !strings.Contains(r.stderr, "/dev/zero: more than 3 MiB") || time.Since(start) > 5*time.Second {
			t.Errorf("-f /dev/zero: exit %d after %v, stderr %s", r.code, time.Since(start), r.stderr)
		}
	}
	r := run(t, strings.Repeat("a", cli.MaxInputBytes+1), "plan", "-f", "-")
	if r.code != cli.ExitError || !strings.Contains(r.stderr, "<stdin>: more than 3 MiB") {
		t.Errorf("stdin over the limit: exit %d, stderr %s", r.code, r.stderr)
	}
}
