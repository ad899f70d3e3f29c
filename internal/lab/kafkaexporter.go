package lab

import (
	"fmt"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/internal/desired"
	"github.com/strata-dev/strata/internal/testutil"
)

// KafkaExporter is the Kafka exporter Strimzi runs beside a Kafka whose spec has kafkaExporter:
// consumer group offsets and lag, and the topics' partition offsets, which the lag and
// processing-rate queries read (internal/alerts/promql.go: ConsumerLag, IngestRate,
// ProcessingRate).
type KafkaExporter struct {
	Pod  Pod
	proc *process
}

// StartKafkaExporter runs the pinned kafka_exporter (hack/tools.sh builds it from
// third_party/kafka_exporter; $STRATA_KAFKA_EXPORTER overrides) against k with the arguments
// Strimzi 1.2.0 gives it for the Kafka object Strata builds for p, and waits until it serves
// /metrics. It returns the exporter with the pod Strimzi would run it in, for AddPod.
func StartKafkaExporter(t testing.TB, dir string, p *v1alpha1.AnalyticsPipeline, k *Kafka) *KafkaExporter {
	t.Helper()
	kafka := desired.Kafka(desired.Inputs{Pipeline: p, Plan: *p.Status.Plan})
	addr := testutil.FreePort(t)
	args, err := kafkaExporterArgs(kafka, k.Bootstrap, addr)
	if err != nil {
		t.Fatal(err)
	}
	bin := testutil.Tool(t, "kafka_exporter", "STRATA_KAFKA_EXPORTER")
	// The exporter exits when no broker answers at its start (a pod's container would be
	// restarted): start it once the brokers listen, not only serve their metrics.
	if err := k.waitListening(2 * time.Minute); err != nil {
		t.Fatal(err)
	}
	proc := start(t, dir, "kafka-exporter", exec.Command(bin, args...))
	if err := waitHTTP(http.DefaultClient, proc, "http://"+addr+"/metrics", time.Minute); err != nil {
		t.Fatal(err)
	}
	return &KafkaExporter{Pod: kafkaExporterPod(kafka.GetNamespace(), kafka.GetName(), addr), proc: proc}
}

// kafkaExporterArgs are the exporter's arguments as Strimzi 1.2.0 sets them, for a Kafka object
// (its spec.kafka.version and spec.kafkaExporter) and the brokers at bootstrap, serving on
// listen. Strimzi 1.2.0's cluster-operator/.../model/KafkaExporter.java sets environment variables
// from the spec (getEnvVars); docker-images/kafka-based/kafka/exporter-scripts/kafka_exporter_run.sh
// turns them into these flags:
//   - --kafka.server: the cluster's bootstrap Service on the replication port 9091;
//   - --kafka.version: the canonical form of spec.kafka.version;
//   - --group.filter, --topic.filter: spec.kafkaExporter's groupRegex and topicRegex (and the
//     exclude regexes when set);
//   - --no-offset.show-all: only when spec.kafkaExporter.showAllOffsets is false;
//   - --web.listen-address=:9404, the tcp-prometheus port;
//   - --tls.*: the cluster CA and the exporter's own client certificate.
//
// The lab's brokers listen in plaintext, so the TLS flags are left out: what the lab checks is
// what the exporter reports, not how it authenticates.
func kafkaExporterArgs(kafka *unstructured.Unstructured, bootstrap, listen string) ([]string, error) {
	spec, ok, err := unstructured.NestedMap(kafka.Object, "spec", "kafkaExporter")
	if err != nil || !ok {
		return nil, fmt.Errorf("the Kafka %s has no spec.kafkaExporter: Strimzi would run no exporter (%v)", kafka.GetName(), err)
	}
	version, _, _ := unstructured.NestedString(kafka.Object, "spec", "kafka", "version")
	if version == "" {
		return nil, fmt.Errorf("the Kafka %s has no spec.kafka.version", kafka.GetName())
	}
	// A cluster has one bootstrap address, its Service; the lab's is the brokers' list, which the
	// exporter takes as one --kafka.server each.
	var args []string
	for _, b := range strings.Split(bootstrap, ",") {
		args = append(args, "--kafka.server="+b)
	}
	args = append(args, "--kafka.version="+version, "--web.listen-address="+listen)
	for _, f := range []struct{ field, flag string }{
		{"groupRegex", "group.filter"}, {"topicRegex", "topic.filter"},
		{"groupExcludeRegex", "group.exclude"}, {"topicExcludeRegex", "topic.exclude"},
	} {
		if v, _ := spec[f.field].(string); v != "" {
			args = append(args, "--"+f.flag+"="+v)
		}
	}
	if all, ok := spec["showAllOffsets"].(bool); ok && !all {
		args = append(args, "--no-offset.show-all")
	}
	return args, nil
}

// kafkaExporterPod is the pod Strimzi 1.2.0 runs the exporter in: a Deployment named
// <cluster>-kafka-exporter (KafkaExporterResources.componentName), so pods named
// <cluster>-kafka-exporter-<replica set hash>-<suffix>, with the component's labels (the
// PodMonitor strata-kafka selects strimzi.io/kind: Kafka) and the metrics port tcp-prometheus.
func kafkaExporterPod(namespace, cluster, addr string) Pod {
	name := cluster + "-kafka-exporter"
	return Pod{
		Namespace: namespace, Name: name + "-6d9c7b8f5-x7k2p", Container: name, PortName: "tcp-prometheus",
		Address: addr,
		Labels: map[string]string{
			"strimzi.io/kind": "Kafka", "strimzi.io/cluster": cluster, "strimzi.io/name": name,
			"strimzi.io/component-type": "kafka-exporter",
		},
	}
}
