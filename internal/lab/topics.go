package lab

import (
	"context"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// Topic is a topic as Kafka has it, read with Kafka's own kafka-topics.sh (TopicCommand
// --describe), for the tests that hold what Strimzi's Topic Operator made of a KafkaTopic
// against what Strata asked for.
type Topic struct {
	// Exists is false when Kafka has no topic of that name.
	Exists                        bool
	Partitions, ReplicationFactor int
	// Configs are the topic's own configurations (those it overrides: TopicCommand lists the
	// entries that are not the broker's defaults).
	Configs map[string]string
}

// DescribeTopic reads topic from the cluster. A topic Kafka does not have is Exists false; any
// other failure of the tool fails the test.
func (k *Kafka) DescribeTopic(ctx context.Context, t testing.TB, topic string) Topic {
	t.Helper()
	argv := []string{"-Xms32m", "-Xmx256m", "-XX:+UseSerialGC", "-cp", classpath(t), "org.apache.kafka.tools.TopicCommand",
		"--bootstrap-server", k.Bootstrap, "--describe", "--topic", topic}
	out, err := exec.CommandContext(ctx, java(), argv...).CombinedOutput()
	if err != nil {
		if strings.Contains(string(out), "does not exist") {
			return Topic{}
		}
		t.Fatalf("TopicCommand --describe --topic %s: %v\n%s", topic, err, out)
	}
	got, ok := parseTopicDescription(string(out))
	if !ok {
		t.Fatalf("TopicCommand --describe --topic %s: no summary line in\n%s", topic, out)
	}
	return got
}

// parseTopicDescription reads TopicCommand's summary line ("Topic: x<TAB>TopicId: ...<TAB>
// PartitionCount: 21<TAB>ReplicationFactor: 2<TAB>Configs: a=1,b=2"; the partitions' lines
// follow, each with a Partition field).
func parseTopicDescription(out string) (Topic, bool) {
	for _, line := range strings.Split(out, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(line), "Topic:") || strings.Contains(line, "Partition: ") {
			continue
		}
		got := Topic{Exists: true, Configs: map[string]string{}}
		for _, field := range strings.Split(line, "\t") {
			key, value, _ := strings.Cut(strings.TrimSpace(field), ":")
			value = strings.TrimSpace(value)
			switch key {
			case "PartitionCount":
				got.Partitions, _ = strconv.Atoi(value)
			case "ReplicationFactor":
				got.ReplicationFactor, _ = strconv.Atoi(value)
			case "Configs":
				for _, kv := range strings.Split(value, ",") {
					if k, v, ok := strings.Cut(kv, "="); ok {
						got.Configs[k] = v
					}
				}
			}
		}
		return got, true
	}
	return Topic{}, false
}
