package lab

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// Topics and clients through Kafka's own command-line tools, for the tests that hold what
// Strimzi's Topic and User Operators made of Strata's KafkaTopic and KafkaUser against what Strata
// asked for (internal/upstream).

// Topic is a topic as Kafka has it, read with Kafka's own kafka-topics.sh (TopicCommand
// --describe).
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

// ProduceLines writes lines to topic on the PLAINTEXT listener (kafka-console-producer.sh,
// acks=all), one record each.
func (k *Kafka) ProduceLines(ctx context.Context, t testing.TB, topic string, lines []string) {
	t.Helper()
	cmd := exec.CommandContext(ctx, java(), "-Xms32m", "-Xmx256m", "-XX:+UseSerialGC", "-cp", classpath(t),
		"org.apache.kafka.tools.ConsoleProducer", "--bootstrap-server", k.Bootstrap, "--topic", topic,
		"--command-property", "acks=all")
	cmd.Stdin = strings.NewReader(strings.Join(lines, "\n") + "\n")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("ConsoleProducer --topic %s: %v\n%s", topic, err, out)
	}
}

// ConsumeAs reads up to n records of topic from the beginning as the SCRAM-SHA-512 user whose
// JAAS line is jaas (the sasl.jaas.config the User Operator writes), in consumer group group,
// on the SASL_PLAINTEXT listener (StartKafkaSCRAM), within timeoutMs of no record. It returns
// the records read, and the tool's output when it failed (authentication, authorization).
func (k *Kafka) ConsumeAs(ctx context.Context, t testing.TB, jaas, topic, group string, n, timeoutMs int) ([]string, error) {
	t.Helper()
	if k.SCRAMBootstrap == "" {
		t.Fatal("ConsumeAs needs the SCRAM listener: StartKafkaSCRAM")
	}
	cfg := filepath.Join(t.TempDir(), "client.properties")
	props := "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=SCRAM-SHA-512\nsasl.jaas.config=" + jaas + "\n"
	if err := os.WriteFile(cfg, []byte(props), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, java(), "-Xms32m", "-Xmx256m", "-XX:+UseSerialGC", "-cp", classpath(t),
		"org.apache.kafka.tools.consumer.ConsoleConsumer", "--bootstrap-server", k.SCRAMBootstrap, "--topic", topic,
		"--group", group, "--from-beginning", "--max-messages", strconv.Itoa(n),
		"--timeout-ms", strconv.Itoa(timeoutMs), "--command-config", cfg)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	// The launcher's log4j configuration logs to standard output too: its lines are not records.
	var records []string
	logs := stderr.String()
	for _, line := range strings.Split(stdout.String(), "\n") {
		switch {
		case toolLog.MatchString(line), toolTrace.MatchString(line):
			logs += line + "\n"
		case line != "":
			records = append(records, line)
		}
	}
	if err != nil || strings.Contains(logs, " ERROR ") {
		return records, fmt.Errorf("ConsoleConsumer as the SCRAM user on %s: %v\n%s", topic, err, logs)
	}
	return records, nil
}

// toolLog is a log line of a Kafka tool run with the launcher's class path, whose log4j2
// configuration (the jvm modules' log4j2-test.properties) logs "HH:mm:ss.SSS LEVEL logger: ...".
var toolLog = regexp.MustCompile(`^\d\d:\d\d:\d\d\.\d{3} (TRACE|DEBUG|INFO|WARN|ERROR) `)

// toolTrace is a line of an exception a log line carries (%ex): its class and message, a frame,
// or its cause.
var toolTrace = regexp.MustCompile(`^(\s+at |\s*\.\.\. \d+ more|Caused by: |[\w.$]+(Exception|Error)(: |$))`)

// CreateTopic creates topic with partitions × replicationFactor on the PLAINTEXT listener
// (kafka-topics.sh --create), as a super user.
func (k *Kafka) CreateTopic(ctx context.Context, t testing.TB, topic string, partitions, replicationFactor int) {
	t.Helper()
	out, err := exec.CommandContext(ctx, java(), "-Xms32m", "-Xmx256m", "-XX:+UseSerialGC", "-cp", classpath(t),
		"org.apache.kafka.tools.TopicCommand", "--bootstrap-server", k.Bootstrap, "--create", "--topic", topic,
		"--partitions", strconv.Itoa(partitions), "--replication-factor", strconv.Itoa(replicationFactor)).CombinedOutput()
	if err != nil {
		t.Fatalf("TopicCommand --create --topic %s: %v\n%s", topic, err, out)
	}
}
