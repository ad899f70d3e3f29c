package lab

import (
	"fmt"
	"testing"

	"github.com/strata-dev/strata/internal/desired"
	"github.com/strata-dev/strata/internal/lab/netlab"
)

// linksLogConfig keeps little of the topic on each broker: the links are 30 times slower than
// the study's, and so is what a move of partitions onto a new broker may take (Kafka.Reassign
// moves each replica's whole log). 24 MiB a partition in segments of 8 MiB, checked every 10 s:
// a new broker of three receives some 300 MiB, minutes at the rebalance throttle.
var linksLogConfig = []string{"log.segment.bytes=8388608", "log.retention.bytes=25165824",
	"log.retention.check.interval.ms=10000"}

// StartOnLinks runs the lab's pipeline on shaped links (as root): each broker in a network
// namespace of its own whose link netlab shapes to o.LinkBytesPerSecond each way, the producer
// and the consumer in namespaces of their own, and cAdvisor reporting each broker as the kubelet
// reports its pod, so the brokers' network series are their links' own counters. The operator and
// Prometheus run as in Start. Without root it skips the test, saying what was not checked.
//
// Prometheus, in the test's own namespace, cannot reach the brokers' namespaces: their JMX
// exporters and the Kafka exporter are not scraped here (Start's lab covers them); cAdvisor reads
// every process's counters from the test's namespace.
func StartOnLinks(t testing.TB, o Options) *Lab {
	t.Helper()
	specs := []netlab.HostSpec{{Name: "producer"}, {Name: "consumer"}}
	for i := range o.Brokers {
		specs = append(specs, netlab.HostSpec{Name: fmt.Sprintf("broker-%d", i),
			Link: netlab.Link{SendBytesPerSecond: o.LinkBytesPerSecond, ReceiveBytesPerSecond: o.LinkBytesPerSecond}})
	}
	nl := netlab.New(t, specs...) // skips without root
	cadvisorDir := t.TempDir()
	cadv := StartCAdvisor(t, cadvisorDir)
	l := startControl(t, o, KubeletMonitor())
	l.AddPod(t, cadv.Pod)
	l.CAdvisor = cadv
	l.Net = nl

	p := l.Pipeline
	hosts := make([]*netlab.Host, o.Brokers)
	for i := range hosts {
		hosts[i] = nl.Hosts[fmt.Sprintf("broker-%d", i)]
	}
	l.Kafka = StartKafkaOn(t, l.dir, desired.BrokerPodPrefix(p), hosts, nl.Hub, kafkaRules(t, p), linksLogConfig...)
	for _, b := range l.Kafka.Brokers {
		cadv.Add(t, b.proc.Pid(), p.Namespace, b.Pod, "kafka")
	}
	pl := p.Status.Plan
	l.Producer = l.Kafka.ProduceFrom(t, nl.Hosts["producer"], l.dir, desired.TopicName(p), int(pl.Partitions),
		int(pl.ReplicationFactor), o.MessagesPerSecond*o.MessageBytes, int(o.MessageBytes))
	l.Consumer = l.Kafka.ConsumeFrom(t, nl.Hosts["consumer"], l.dir, desired.TopicName(p), desired.ConsumerGroup(p))
	return l
}

// AddBrokers starts brokers until the cluster runs n, each in a namespace of its own on a link
// shaped as the others, reported by cAdvisor as the broker pool's next pods, as Strimzi starts
// them when the pool's replicas grow. They hold nothing until partitions move onto them
// (Kafka.Reassign).
func (l *Lab) AddBrokers(t testing.TB, n int, link int64) []*Broker {
	t.Helper()
	var added []*Broker
	for i := len(l.Kafka.Brokers); i < n; i++ {
		h := l.Net.Add(t, netlab.HostSpec{Name: fmt.Sprintf("broker-%d", i),
			Link: netlab.Link{SendBytesPerSecond: link, ReceiveBytesPerSecond: link}})
		b := l.Kafka.AddBroker(t, h, desired.BrokerPodPrefix(l.Pipeline))
		l.CAdvisor.Add(t, b.proc.Pid(), l.Pipeline.Namespace, b.Pod, "kafka")
		added = append(added, b)
	}
	return added
}
