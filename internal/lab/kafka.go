package lab

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Broker is one Kafka node of the lab: broker and KRaft controller in one process (Strimzi runs
// them in separate pools; the metrics the queries read are the brokers', which are the same).
type Broker struct {
	ID          int
	Pod         string // the pod name Strimzi would give it: <cluster>-<pool>-<node id>
	Port        int    // the client listener
	MetricsPort int    // the JMX exporter's /metrics (9404, tcp-prometheus, in a pod)
	proc        *process
}

// Running says whether the broker's process runs.
func (b *Broker) Running() bool { return b.proc.Running() }

// Stop stops the broker (SIGTERM: a controlled shutdown, as when its pod is deleted).
func (b *Broker) Stop() { b.proc.Stop() }

// Kafka is the lab's Kafka cluster.
type Kafka struct {
	Brokers   []*Broker
	Bootstrap string
}

// StartKafka starts n nodes named podPrefix+<node id>, each with the JMX exporter loaded with
// rules (the text of the metrics ConfigMap Strata generates), and waits until each serves
// its metrics. Brokers start in parallel; each takes some 10 s of one core.
func StartKafka(t testing.TB, dir, podPrefix string, n int, rules string) *Kafka {
	t.Helper()
	rulesFile := filepath.Join(dir, "kafka-metrics.yaml")
	if err := os.WriteFile(rulesFile, []byte(rules), 0o600); err != nil {
		t.Fatal(err)
	}
	id := make([]byte, 16)
	_, _ = rand.Read(id)
	clusterID := base64.RawURLEncoding.EncodeToString(id)

	k := &Kafka{}
	controllerPorts := make([]int, n)
	var voters, bootstrap []string
	for i := range n {
		b := &Broker{ID: i, Pod: podPrefix + strconv.Itoa(i), Port: freePort(t), MetricsPort: freePort(t)}
		controllerPorts[i] = freePort(t)
		k.Brokers = append(k.Brokers, b)
		voters = append(voters, fmt.Sprintf("%d@127.0.0.1:%d", i, controllerPorts[i]))
		bootstrap = append(bootstrap, fmt.Sprintf("127.0.0.1:%d", b.Port))
	}
	k.Bootstrap = strings.Join(bootstrap, ",")
	minISR := min(2, n)
	for i, b := range k.Brokers {
		props := fmt.Sprintf(`process.roles=broker,controller
node.id=%d
controller.quorum.voters=%s
listeners=PLAINTEXT://127.0.0.1:%d,CONTROLLER://127.0.0.1:%d
advertised.listeners=PLAINTEXT://127.0.0.1:%d
controller.listener.names=CONTROLLER
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
inter.broker.listener.name=PLAINTEXT
log.dirs=%s
offsets.topic.replication.factor=%d
offsets.topic.num.partitions=3
transaction.state.log.replication.factor=%d
transaction.state.log.min.isr=%d
min.insync.replicas=%d
group.initial.rebalance.delay.ms=0
num.network.threads=2
num.io.threads=2
num.replica.fetchers=1
replica.lag.time.max.ms=10000
broker.session.timeout.ms=30000
log.segment.bytes=67108864
log.retention.bytes=268435456
`, b.ID, strings.Join(voters, ","), b.Port, controllerPorts[i], b.Port, filepath.Join(dir, b.Pod, "data"),
			n, n, minISR, minISR)
		propsFile := filepath.Join(dir, b.Pod+".properties")
		if err := os.WriteFile(propsFile, []byte(props), 0o600); err != nil {
			t.Fatal(err)
		}
		b.proc = start(t, dir, b.Pod, javaCommand(t, "384m", "broker", propsFile, clusterID, strconv.Itoa(b.MetricsPort), rulesFile))
	}
	for _, b := range k.Brokers {
		if err := waitHTTP(b.proc, fmt.Sprintf("http://127.0.0.1:%d/metrics", b.MetricsPort), 3*time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	return k
}

// Produce starts a producer writing bytesPerSecond in records of recordBytes to topic, which it
// creates first (partitions, replicationFactor) when missing.
func (k *Kafka) Produce(t testing.TB, dir, topic string, partitions, replicationFactor int, bytesPerSecond int64, recordBytes int) *process {
	t.Helper()
	return start(t, dir, "producer-"+topic, javaCommand(t, "256m", "produce", k.Bootstrap, topic,
		strconv.Itoa(partitions), strconv.Itoa(replicationFactor),
		strconv.FormatInt(bytesPerSecond, 10), strconv.Itoa(recordBytes)))
}
