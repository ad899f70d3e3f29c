package lab

import (
	"reflect"
	"testing"
)

// TopicCommand's description, as Kafka 4 prints it: the summary line is read, the partitions'
// lines are not.
func TestParseTopicDescription(t *testing.T) {
	out := "Topic: sensors\tTopicId: 4Lb8cqMxQhW2fdJ0r1yT0g\tPartitionCount: 21\tReplicationFactor: 2\tConfigs: min.insync.replicas=2,retention.bytes=1073741824,segment.bytes=134217728\n" +
		"\tTopic: sensors\tPartition: 0\tLeader: 1\tReplicas: 1,0\tIsr: 1,0\tElr: \tLastKnownElr: \n"
	got, ok := parseTopicDescription(out)
	want := Topic{Exists: true, Partitions: 21, ReplicationFactor: 2, Configs: map[string]string{
		"min.insync.replicas": "2", "retention.bytes": "1073741824", "segment.bytes": "134217728"}}
	if !ok || !reflect.DeepEqual(got, want) {
		t.Errorf("%+v, %v; want %+v", got, ok, want)
	}
	if _, ok := parseTopicDescription("\tTopic: sensors\tPartition: 0\tLeader: 1\n"); ok {
		t.Error("a partition's line read as the summary")
	}
}

// The launcher's log lines, and the exceptions they carry, are told from records.
func TestToolLog(t *testing.T) {
	for line, want := range map[string]bool{
		"08:58:12.464 ERROR ConsoleConsumer: Error processing message":          true,
		"08:58:12.459 WARN NetworkClient: [Consumer clientId=console-consumer]": true,
		"r0":                   false,
		"08:58 a record":       false,
		"12:00:00.000 NOTE it": false,
		"org.apache.kafka.common.errors.TopicAuthorizationException: Not authorized to access topics: [other]": true,
		"\tat org.apache.kafka.clients.Metadata.maybeThrow(Metadata.java:512)":                                 true,
		"Caused by: java.io.IOException: x":                                                                    true,
		"\t... 12 more":                                                                                        true,
		"an Exception: in a record's words":                                                                    false,
	} {
		if got := toolLog.MatchString(line) || toolTrace.MatchString(line); got != want {
			t.Errorf("%q: log line %v, want %v", line, got, want)
		}
	}
}
