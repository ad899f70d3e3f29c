package desired

import (
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// ingestConfJava is the job's configuration class; its key constants are the job's contract.
const ingestConfJava = "../../jvm/ingest-job/src/main/java/dev/strata/ingest/IngestConf.java"

// javaKeys reads IngestConf.java: every key the job knows (its `static final String NAME =
// PREFIX + "…"` constants listed in KNOWN) and those it requires (read with k.required, or
// with a typed reader given no default).
func javaKeys(t *testing.T) (known, required map[string]bool) {
	t.Helper()
	src, err := os.ReadFile(ingestConfJava)
	if err != nil {
		t.Fatal(err)
	}
	s := string(src)
	names := map[string]string{}
	for _, m := range regexp.MustCompile(`static final String (\w+) = PREFIX \+ "([^"]+)";`).FindAllStringSubmatch(s, -1) {
		names[m[1]] = "spark.strata." + m[2]
	}
	knownList := regexp.MustCompile(`(?s)Set<String> KNOWN = Set\.of\((.*?)\);`).FindStringSubmatch(s)
	if knownList == nil || len(names) == 0 {
		t.Fatalf("%s: no key constants or no KNOWN set found: the test must follow the file", ingestConfJava)
	}
	known = map[string]bool{}
	for _, n := range strings.Split(knownList[1], ",") {
		key, ok := names[strings.TrimSpace(n)]
		if !ok {
			t.Fatalf("%s: KNOWN names %q, which is no key constant", ingestConfJava, strings.TrimSpace(n))
		}
		known[key] = true
	}
	required = map[string]bool{}
	for _, re := range []string{`k\.required\((\w+)\)`, `k\.positive(?:Long|Int)\((\w+), null\)`,
		`k\.nonNegativeInt\((\w+)\)`, `k\.url\((\w+)\)`} {
		for _, m := range regexp.MustCompile(re).FindAllStringSubmatch(s, -1) {
			required[names[m[1]]] = true
		}
	}
	return known, required
}

// strataKeys are the job's keys in a configuration (the shuffle plugin's are not the job's).
func strataKeys(conf map[string]string) map[string]bool {
	out := map[string]bool{}
	for k := range conf {
		if strings.HasPrefix(k, "spark.strata.") && !strings.HasPrefix(k, "spark.strata.shuffle.") {
			out[k] = true
		}
	}
	return out
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// notWritten are the job's optional keys the operator leaves at the job's defaults.
var notWritten = map[string]bool{
	"spark.strata.elasticsearch.deadLetterIndex": true, // <index>-deadletter
	"spark.strata.elasticsearch.bulkActions":     true,
	"spark.strata.elasticsearch.bulkBytes":       true,
	"spark.strata.record.format":                 true, // json
	"spark.strata.record.idField":                true, // topic-partition-offset ids
	"spark.strata.record.timestampField":         true,
}

// TestIngestJobKeysMatchTheJob: for Strata's job the operator writes exactly the keys
// IngestConf.java knows, less the optional ones left at their defaults, and every key the job
// requires, so that a key renamed or added on either side fails here, not at the job's start.
func TestIngestJobKeysMatchTheJob(t *testing.T) {
	known, required := javaKeys(t)
	if len(required) < 8 {
		t.Fatalf("only %d required keys read from %s: %v", len(required), ingestConfJava, sortedKeys(required))
	}
	for k := range notWritten {
		if !known[k] {
			t.Errorf("notWritten names %s, which the job does not know", k)
		}
	}
	for _, tc := range []struct {
		name string
		in   Inputs
	}{
		{"with a lifecycle", strataJob(t)},
		{"without a lifecycle, no planned shards", func() Inputs {
			in := strataJob(t)
			in.Plan.Retention.ElasticsearchRolloverBytes = 0
			in.Plan.Shards = 0
			return in
		}()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := strataKeys(SparkConf(tc.in))
			for k := range required {
				if !got[k] {
					t.Errorf("the job requires %s; the operator does not write it", k)
				}
			}
			for k := range got {
				if !known[k] {
					t.Errorf("the operator writes %s; the job does not know it and would refuse to start", k)
				}
			}
			lifecycle := map[string]bool{ESRolloverMaxShardConf: true, ESRolloverMaxAgeConf: true, ESDeleteAfterRolloverConf: true}
			for k := range known {
				if !got[k] && !notWritten[k] && !(lifecycle[k] && tc.in.Plan.Retention.ElasticsearchRolloverBytes == 0) {
					t.Errorf("the job knows %s; the operator does not write it (add it, or to notWritten saying why)", k)
				}
			}
		})
	}
}

// TestUsersJobKeepsItsConf: a job of the user's gets none of the ingestion job's keys and no
// checkpoint claim; only the keys it always had.
func TestUsersJobKeepsItsConf(t *testing.T) {
	in := splitTiers(t) // the user's example.SensorJob
	if RunsIngestJob(in.Pipeline) {
		t.Fatal("splitTiers runs a job of the user's")
	}
	want := []string{ESReplicasConf, ESDeleteAfterRolloverConf, ESRolloverMaxAgeConf, ESRolloverMaxShardConf,
		ESShardsConf, "spark.strata.kafka.bootstrapServers", "spark.strata.kafka.topic"}
	sort.Strings(want)
	if got := sortedKeys(strataKeys(SparkConf(in))); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("user's job keys = %v, want %v", got, want)
	}
	if c := CheckpointClaim(in); c != nil {
		t.Errorf("user's job got a checkpoint claim %s", c.GetName())
	}
	for _, u := range All(in) {
		if u.GroupVersionKind() == PersistentVolumeClaimGVK {
			t.Errorf("All builds a claim %s for a user's job", u.GetName())
		}
	}
}

func TestRunsIngestJob(t *testing.T) {
	for _, tc := range []struct {
		file, class string
		want        bool
	}{
		{"", "", true},
		{IngestJobFile, IngestJobMainClass, true},
		{IngestJobFile, "", true},
		{"local:///opt/app/job.jar", "example.SensorJob", false},
		{"local:///opt/app/job.py", "", false},
		{IngestJobFile, "example.Other", false},
	} {
		p := splitTiers(t).Pipeline
		p.Spec.Spark.MainApplicationFile, p.Spec.Spark.MainClass = tc.file, tc.class
		if got := RunsIngestJob(p); got != tc.want {
			t.Errorf("RunsIngestJob(%q, %q) = %v, want %v", tc.file, tc.class, got, tc.want)
		}
	}
}

// TestIngestJobSizing: the batch cap is MicroBatchSeconds of the faster of ingest and catch-up,
// the partitions are the planned cores, and the checkpoint is on the mounted claim.
func TestIngestJobSizing(t *testing.T) {
	for _, tc := range []struct {
		ingest, catchUp, want int64
	}{
		{10000, 0, 100000},
		{10000, 30000, 300000},
		{10000, 5000, 100000},
	} {
		in := strataJob(t)
		in.Pipeline.Spec.Workload.MessagesPerSecond, in.Pipeline.Spec.Workload.ConsumerMessagesPerSecond = tc.ingest, tc.catchUp
		conf := SparkConf(in)
		if got := conf[MaxOffsetsPerTriggerConf]; got != itoa(tc.want) {
			t.Errorf("ingest %d, catch-up %d: maxOffsetsPerTrigger = %s, want %d", tc.ingest, tc.catchUp, got, tc.want)
		}
	}
	in := strataJob(t)
	in.Plan.Executors, in.Plan.ExecutorCores = 3, 4
	in.Pipeline.Spec.Spark.Executors.Max = 5
	conf := SparkConf(in)
	if got := conf[MinPartitionsConf]; got != "20" {
		t.Errorf("minPartitions = %s, want 20 (at most 5 executors × 4 cores: the job scales in place)", got)
	}
	in.Pipeline.Spec.Spark.Image = "registry.example/strata-ingest:old"
	if got := SparkConf(in)[MinPartitionsConf]; got != "12" {
		t.Errorf("minPartitions in an image of the user's = %s, want 12 (3 executors × 4 cores)", got)
	}
	in.Pipeline.Spec.Spark.Image = ""
	if !strings.HasPrefix(conf[CheckpointDirConf], conf["spark.kubernetes.driver.volumes.persistentVolumeClaim.checkpoint.mount.path"]+"/") {
		t.Errorf("checkpointDir %s is not on the checkpoint volume", conf[CheckpointDirConf])
	}
	if got := conf["spark.kubernetes.driver.volumes.persistentVolumeClaim.checkpoint.options.claimName"]; got != CheckpointClaim(in).GetName() {
		t.Errorf("driver mounts claim %q, the pipeline builds %q", got, CheckpointClaim(in).GetName())
	}
}

// TestIngestJobDefaults: a pipeline naming no job runs Strata's: its image, jar and main class;
// one naming its own keeps them (TestGolden's split-tiers and single-tier-delete pin that).
func TestIngestJobDefaults(t *testing.T) {
	for _, tc := range []struct {
		name, image, file, class, flag string
		want                           [3]string
	}{
		{"nothing named", "", "", "", "", [3]string{DefaultIngestImage, IngestJobFile, IngestJobMainClass}},
		{"nothing named, --ingest-image", "", "", "", "registry.example/strata-ingest:9",
			[3]string{"registry.example/strata-ingest:9", IngestJobFile, IngestJobMainClass}},
		{"own build of Strata's image", "registry.example/strata-ingest:mine", "", "", "registry.example/strata-ingest:9",
			[3]string{"registry.example/strata-ingest:mine", IngestJobFile, IngestJobMainClass}},
		{"user's job", "registry.example/sensor-job:1.0", "local:///opt/app/job.jar", "example.SensorJob", "",
			[3]string{"registry.example/sensor-job:1.0", "local:///opt/app/job.jar", "example.SensorJob"}},
		{"user's Python job", "registry.example/clicks:2.3", "local:///opt/app/job.py", "", "registry.example/strata-ingest:9",
			[3]string{"registry.example/clicks:2.3", "local:///opt/app/job.py", ""}},
	} {
		in := strataJob(t)
		s := &in.Pipeline.Spec.Spark
		s.Image, s.MainApplicationFile, s.MainClass = tc.image, tc.file, tc.class
		in.IngestImage = tc.flag
		app := SparkApplication(in)
		var got [3]string
		for i, f := range []string{"image", "mainApplicationFile", "mainClass"} {
			got[i], _, _ = unstructured.NestedString(app.Object, "spec", f)
		}
		if got != tc.want {
			t.Errorf("%s: image, file, class = %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestIngestImageFollowsTheChart: Strata's job image is tagged with the operator's version, the
// chart's appVersion, like the operator's own image.
func TestIngestImageFollowsTheChart(t *testing.T) {
	b, err := os.ReadFile("../../charts/strata/Chart.yaml")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^appVersion: "?([^"\s]+)"?`).FindSubmatch(b)
	if m == nil {
		t.Fatal("charts/strata/Chart.yaml has no appVersion")
	}
	if want := "ghcr.io/strata-dev/strata-ingest:" + string(m[1]); DefaultIngestImage != want {
		t.Errorf("DefaultIngestImage = %s, want %s (the chart's appVersion)", DefaultIngestImage, want)
	}
}
