package lab

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/strata-dev/strata/internal/lab/netlab"
)

// Broker is one Kafka node of the lab: broker and KRaft controller in one process (Strimzi runs
// them in separate pools; the metrics the queries read are the brokers', which are the same).
type Broker struct {
	ID          int
	Pod         string // the pod name Strimzi would give it: <cluster>-<pool>-<node id>
	Address     string // where it listens: 127.0.0.1, or its netlab host's address
	Port        int    // the client listener
	MetricsPort int    // the JMX exporter's /metrics (9404, tcp-prometheus, in a pod)
	// SCRAMPort is the SASL_PLAINTEXT listener's (StartKafkaSCRAM; 0 otherwise).
	SCRAMPort int
	proc      *process
	host      *netlab.Host
}

// Running says whether the broker's process runs.
func (b *Broker) Running() bool { return b.proc.Running() }

// Stop stops the broker (SIGTERM: a controlled shutdown, as when its pod is deleted).
func (b *Broker) Stop() { b.proc.Stop() }

// Kafka is the lab's Kafka cluster.
type Kafka struct {
	Brokers   []*Broker
	Bootstrap string
	// SCRAMBootstrap is the brokers' SASL_PLAINTEXT listeners (StartKafkaSCRAM; "" otherwise).
	SCRAMBootstrap string

	// What a broker added later needs: the cluster's ID, its controllers, the metrics rules, the
	// replication settings of the first nodes, and where the test reaches metrics from.
	clusterID, voters, dir, rulesFile string
	internalRF, minISR                int
	client                            *http.Client
	extra                             []string
	scram                             bool
}

// StartKafka starts n nodes named podPrefix+<node id>, each with the JMX exporter loaded with
// rules (the text of the metrics ConfigMap Strata generates), and waits until each serves
// its metrics. Brokers start in parallel; each takes some 10 s of one core.
func StartKafka(t testing.TB, dir, podPrefix string, n int, rules string) *Kafka {
	t.Helper()
	return startKafka(t, dir, podPrefix, make([]*netlab.Host, n), nil, rules, false)
}

// StartKafkaSCRAM starts n nodes on loopback as StartKafka does, each with a second client
// listener, SASL_PLAINTEXT with SCRAM-SHA-512 (SCRAMPort, SCRAMBootstrap), as Strimzi's plain
// listener with scram-sha-512 authentication, and Kafka's StandardAuthorizer, as the Kafka Strata
// builds has (simple authorization). The PLAINTEXT listener's clients, ANONYMOUS, are super users:
// the nodes themselves, the test's tools and Strimzi's entity operator there (which
// authenticates with its own certificate in a cluster, also a super user); a SCRAM user is held
// to its ACLs.
func StartKafkaSCRAM(t testing.TB, dir, podPrefix string, n int, rules string) *Kafka {
	t.Helper()
	return startKafka(t, dir, podPrefix, make([]*netlab.Host, n), nil, rules, true)
}

// StartKafkaOn starts one node in each of hosts, as StartKafka does, each listening on its
// host's address (its own network namespace, its link shaped as the host's is) on the ports a
// Strimzi pod uses; hub reaches them for the readiness checks.
// Each of extra is a line of the nodes' server.properties, in place of the lab's value.
func StartKafkaOn(t testing.TB, dir, podPrefix string, hosts []*netlab.Host, hub *netlab.Host, rules string, extra ...string) *Kafka {
	t.Helper()
	return startKafka(t, dir, podPrefix, hosts, hub, rules, false, extra...)
}

// startKafka starts a node per entry of hosts: on loopback with free ports where the entry is
// nil, else inside the host; with scram, each with the SCRAM listener (StartKafkaSCRAM).
func startKafka(t testing.TB, dir, podPrefix string, hosts []*netlab.Host, hub *netlab.Host, rules string, scram bool, extra ...string) *Kafka {
	t.Helper()
	n := len(hosts)
	rulesFile := filepath.Join(dir, "kafka-metrics.yaml")
	if err := os.WriteFile(rulesFile, []byte(rules), 0o600); err != nil {
		t.Fatal(err)
	}
	id := make([]byte, 16)
	_, _ = rand.Read(id)
	clusterID := base64.RawURLEncoding.EncodeToString(id)

	k := &Kafka{extra: extra, scram: scram}
	var scramAddrs []string
	controllerPorts := make([]int, n)
	addrs := make([]string, n)
	var voters, bootstrap []string
	for i, h := range hosts {
		b := &Broker{ID: i, Pod: podPrefix + strconv.Itoa(i), host: h}
		if h == nil {
			addrs[i], b.Port, b.MetricsPort, controllerPorts[i] = "127.0.0.1", freePort(t), freePort(t), freePort(t)
		} else {
			// A namespace of its own: the ports of a Strimzi broker pod (client 9092, controller
			// 9090, JMX exporter 9404).
			addrs[i], b.Port, b.MetricsPort, controllerPorts[i] = h.IP, 9092, 9404, 9090
		}
		b.Address = addrs[i]
		if k.scram {
			b.SCRAMPort = freePort(t)
			scramAddrs = append(scramAddrs, fmt.Sprintf("%s:%d", addrs[i], b.SCRAMPort))
		}
		k.Brokers = append(k.Brokers, b)
		voters = append(voters, fmt.Sprintf("%d@%s:%d", i, addrs[i], controllerPorts[i]))
		bootstrap = append(bootstrap, fmt.Sprintf("%s:%d", addrs[i], b.Port))
	}
	k.Bootstrap, k.SCRAMBootstrap = strings.Join(bootstrap, ","), strings.Join(scramAddrs, ",")
	k.clusterID, k.voters, k.dir, k.rulesFile = clusterID, strings.Join(voters, ","), dir, rulesFile
	k.internalRF, k.minISR = n, min(2, n)
	k.client = http.DefaultClient
	if hub != nil {
		k.client = hub.HTTPClient()
	}
	for i, b := range k.Brokers {
		k.launch(t, b, "broker,controller", controllerPorts[i])
	}
	for _, b := range k.Brokers {
		if err := waitHTTP(k.client, b.proc, fmt.Sprintf("http://%s:%d/metrics", b.Address, b.MetricsPort), 3*time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	return k
}

// AddBroker starts one more node, a broker only (the controllers are the first nodes, as a
// Strimzi broker pool added to a running cluster), in host, named as the pool names its next
// pod, and waits until it serves its metrics. It holds no partition until they are moved onto
// it (Reassign).
func (k *Kafka) AddBroker(t testing.TB, host *netlab.Host, podPrefix string) *Broker {
	t.Helper()
	id := len(k.Brokers)
	b := &Broker{ID: id, Pod: podPrefix + strconv.Itoa(id), host: host, Address: host.IP, Port: 9092, MetricsPort: 9404}
	k.launch(t, b, "broker", 0)
	if err := waitHTTP(k.client, b.proc, fmt.Sprintf("http://%s:%d/metrics", b.Address, b.MetricsPort), 3*time.Minute); err != nil {
		t.Fatal(err)
	}
	k.Brokers = append(k.Brokers, b)
	return b
}

// launch writes a node's properties and starts it: roles "broker,controller" listen for the
// quorum on controllerPort too.
func (k *Kafka) launch(t testing.TB, b *Broker, roles string, controllerPort int) {
	t.Helper()
	listeners := fmt.Sprintf("listeners=PLAINTEXT://%[1]s:%[2]d\nadvertised.listeners=PLAINTEXT://%[1]s:%[2]d", b.Address, b.Port)
	if controllerPort > 0 {
		listeners = fmt.Sprintf("listeners=PLAINTEXT://%[1]s:%[2]d,CONTROLLER://%[1]s:%[3]d\nadvertised.listeners=PLAINTEXT://%[1]s:%[2]d",
			b.Address, b.Port, controllerPort)
	}
	protocols := "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT"
	if b.SCRAMPort > 0 {
		plain := fmt.Sprintf("PLAINTEXT://%s:%d", b.Address, b.Port)
		sasl := fmt.Sprintf("SASL_PLAINTEXT://%s:%d", b.Address, b.SCRAMPort)
		listeners = strings.ReplaceAll(listeners, plain, plain+","+sasl)
		protocols += ",SASL_PLAINTEXT:SASL_PLAINTEXT"
		listeners += "\nsasl.enabled.mechanisms=SCRAM-SHA-512" +
			"\nlistener.name.sasl_plaintext.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;" +
			"\nauthorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer" +
			"\nsuper.users=User:ANONYMOUS"
	}
	props := fmt.Sprintf(`process.roles=%s
node.id=%d
controller.quorum.voters=%s
%s
controller.listener.names=CONTROLLER
listener.security.protocol.map=%s
inter.broker.listener.name=PLAINTEXT
log.dirs=%s
offsets.topic.replication.factor=%d
offsets.topic.num.partitions=3
transaction.state.log.replication.factor=%d
transaction.state.log.min.isr=%d
min.insync.replicas=%d
group.initial.rebalance.delay.ms=0
auto.create.topics.enable=false
num.network.threads=2
num.io.threads=2
num.replica.fetchers=1
replica.lag.time.max.ms=10000
broker.session.timeout.ms=30000
log.segment.bytes=67108864
log.retention.bytes=268435456
%s
`, roles, b.ID, k.voters, listeners, protocols, filepath.Join(k.dir, b.Pod, "data"), k.internalRF, k.internalRF, k.minISR, k.minISR,
		strings.Join(k.extra, "\n"))
	propsFile := filepath.Join(k.dir, b.Pod+".properties")
	if err := os.WriteFile(propsFile, []byte(props), 0o600); err != nil {
		t.Fatal(err)
	}
	b.proc = start(t, k.dir, b.Pod, inHost(b.host, javaCommand(t, "384m", "broker", propsFile, k.clusterID, strconv.Itoa(b.MetricsPort), k.rulesFile)))
}

// inHost runs cmd inside h's network namespace, or as it is when h is nil.
func inHost(h *netlab.Host, cmd *exec.Cmd) *exec.Cmd {
	if h == nil {
		return cmd
	}
	return h.Command(cmd.Path, cmd.Args[1:]...)
}

// Produce starts a producer writing bytesPerSecond in records of recordBytes to topic, which it
// creates first (partitions, replicationFactor) when missing.
func (k *Kafka) Produce(t testing.TB, dir, topic string, partitions, replicationFactor int, bytesPerSecond int64, recordBytes int) *process {
	t.Helper()
	return k.ProduceFrom(t, nil, dir, topic, partitions, replicationFactor, bytesPerSecond, recordBytes)
}

// ProduceFrom is Produce run inside host (nil: the test's own namespace).
func (k *Kafka) ProduceFrom(t testing.TB, host *netlab.Host, dir, topic string, partitions, replicationFactor int, bytesPerSecond int64, recordBytes int) *process {
	t.Helper()
	return start(t, dir, "producer-"+topic, inHost(host, javaCommand(t, "256m", "produce", k.Bootstrap, topic,
		strconv.Itoa(partitions), strconv.Itoa(replicationFactor),
		strconv.FormatInt(bytesPerSecond, 10), strconv.Itoa(recordBytes), strconv.Itoa(len(k.Brokers)))))
}

// ConsumeFrom starts a consumer, inside host (nil: the test's own namespace), reading everything
// topic receives as group, committing its offsets, as the pipeline's job does.
func (k *Kafka) ConsumeFrom(t testing.TB, host *netlab.Host, dir, topic, group string) *process {
	t.Helper()
	return start(t, dir, "consumer-"+topic, inHost(host, javaCommand(t, "256m", "consume", k.Bootstrap, topic, group)))
}

// waitListening waits until every running broker accepts connections on its client listener.
func (k *Kafka) waitListening(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for _, b := range k.Brokers {
		addr := net.JoinHostPort(b.Address, strconv.Itoa(b.Port))
		for {
			c, err := net.DialTimeout("tcp", addr, time.Second)
			if err == nil {
				c.Close()
				break
			}
			if !b.Running() || time.Now().After(deadline) {
				return fmt.Errorf("broker %s does not listen on %s: %v", b.Pod, addr, err)
			}
			time.Sleep(250 * time.Millisecond)
		}
	}
	return nil
}
