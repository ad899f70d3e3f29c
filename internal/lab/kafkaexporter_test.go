package lab

import (
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/strata-dev/strata/internal/desired"
)

// TestKafkaExporterArgsFollowTheKafka checks the exporter's flags against the Kafka object Strata
// builds, as Strimzi 1.2.0's kafka_exporter_run.sh would pass them.
func TestKafkaExporterArgsFollowTheKafka(t *testing.T) {
	p, err := Pipeline(Options{Brokers: 3, ReplicationFactor: 3, MessagesPerSecond: 500, MessageBytes: 1000})
	if err != nil {
		t.Fatal(err)
	}
	kafka := desired.Kafka(desired.Inputs{Pipeline: p, Plan: *p.Status.Plan})
	got, err := kafkaExporterArgs(kafka, "127.0.0.1:1,127.0.0.1:2", ":9404")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"--kafka.server=127.0.0.1:1", "--kafka.server=127.0.0.1:2", "--kafka.version=" + KafkaVersion,
		"--web.listen-address=:9404", "--group.filter=.*", "--topic.filter=.*"}
	if !slices.Equal(got, want) {
		t.Errorf("args\n got %q\nwant %q", got, want)
	}

	// The optional settings, as a user's edit of the Kafka would carry them.
	spec := kafka.Object["spec"].(map[string]any)
	spec["kafkaExporter"] = map[string]any{"groupRegex": "lab", "topicExcludeRegex": "__.*", "showAllOffsets": false}
	got, err = kafkaExporterArgs(kafka, "b:9091", ":9404")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"--group.filter=lab", "--topic.exclude=__.*", "--no-offset.show-all"} {
		if !slices.Contains(got, f) {
			t.Errorf("args %q lack %s", got, f)
		}
	}

	delete(spec, "kafkaExporter")
	if _, err := kafkaExporterArgs(kafka, "b:9091", ":9404"); err == nil {
		t.Error("a Kafka without spec.kafkaExporter: no error, want one (Strimzi runs no exporter)")
	}
	if _, err := kafkaExporterArgs(&unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{
		"kafkaExporter": map[string]any{}}}}, "b:9091", ":9404"); err == nil {
		t.Error("a Kafka without spec.kafka.version: no error, want one")
	}
}
