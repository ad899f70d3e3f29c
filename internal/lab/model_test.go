package lab

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/internal/desired"
	"github.com/strata-dev/strata/internal/lab/netlab"
	"github.com/strata-dev/strata/internal/plan"
	"github.com/strata-dev/strata/internal/testutil/gen"
)

// The bandwidth model against real brokers (issue 14 point 4, docs/lab.md): the sensor-pipeline
// study (docs/studies.md §1.1) in miniature. Each broker runs in its own network namespace with its
// link shaped to linkBytes each way; a producer and a consumer (the job's read, C = I) run in
// namespaces of their own, unshaped. Records are the study's 9,028 bytes, the replication factor 2.
//
//   - 3 brokers: the plan's per-broker received and sent rates must match the brokers' interface
//     counters (what cAdvisor reports) within 10 %;
//   - 2 brokers: the plan names KafkaBrokerNetwork, and the links are what limits the brokers:
//     they run above the plan's ceiling (90 % efficiency × 80 % target of the wire) and carry
//     well short of the workload; the producers, acks=all, fall behind. TCP through a full
//     bucket with Kafka's request/response traffic tops out near 75 % of the wire here, not at
//     the 96 % one bulk flow gets (internal/lab/netlab's test).
const (
	linkBytes   = 4 << 20 // 4 MiB/s each way: the study's 1 Gbit/s, scaled down 30 times
	recordBytes = 9028
	// modelRecords is the producers' rate: 4.2 MiB/s. With R = 2 and C = I a broker sends
	// (C + I(R-1))/B = 2I/B: 2.8 MiB/s with 3 brokers (within the 2.88 MiB/s the plan may use at
	// 90 % efficiency and 80 % target), 4.2 MiB/s with 2 (over the 4 MiB/s wire).
	modelRecords = 488
	// modelWarmUp lets the consumer catch up and the leaders settle before the measuring window.
	modelWarmUp = 30 * time.Second
	modelWindow = 30 * time.Second
)

// modelPipeline is the lab's pipeline with the miniature link and brokers pinned to n.
func modelPipeline(n int32) *v1alpha1.AnalyticsPipeline {
	return gen.Pipeline(gen.SetName(PipelineNamespace, "model"), gen.SetTopic("model-events"),
		gen.SetWorkload(modelRecords, recordBytes), gen.SetProducers(2), gen.SetBrokers(n, n),
		gen.SetSpec(func(s *v1alpha1.AnalyticsPipelineSpec) {
			s.Kafka.ReplicationFactor = 2
			// The model assumes leaders spread evenly: 12 partitions divide by 2 and 3 brokers.
			// With the automatic count (executors × cores, 10 here) one of 3 brokers leads 4 of
			// 10 partitions and sends a fifth more than the model's mean (docs/lab.md).
			s.Kafka.Topic.Partitions = 12
			s.Network.LinkBitsPerSecond = *resource.NewQuantity(linkBytes*8, resource.DecimalSI)
		}))
}

type rates struct{ received, sent float64 }

// measureBrokers runs the pipeline's brokers, producer and consumer on shaped links and returns
// each broker's received and sent bytes per second over the measuring window.
func measureBrokers(t *testing.T, p *v1alpha1.AnalyticsPipeline, pl v1alpha1.Plan) []rates {
	t.Helper()
	n := int(pl.Brokers)
	specs := []netlab.HostSpec{{Name: "producer"}, {Name: "consumer"}}
	for i := range n {
		specs = append(specs, netlab.HostSpec{Name: fmt.Sprintf("broker-%d", i),
			Link: netlab.Link{SendBytesPerSecond: linkBytes, ReceiveBytesPerSecond: linkBytes}})
	}
	nl := netlab.New(t, specs...)
	hosts := make([]*netlab.Host, n)
	for i := range hosts {
		hosts[i] = nl.Hosts[fmt.Sprintf("broker-%d", i)]
	}
	dir := t.TempDir()
	k := StartKafkaOn(t, dir, desired.BrokerPodPrefix(p), hosts, nl.Hub, kafkaRules(t, withPlan(p, pl)))
	k.ProduceFrom(t, nl.Hosts["producer"], dir, desired.TopicName(p), int(pl.Partitions), int(pl.ReplicationFactor),
		modelRecords*recordBytes, recordBytes)
	k.ConsumeFrom(t, nl.Hosts["consumer"], dir, desired.TopicName(p), p.Name)

	time.Sleep(modelWarmUp) // a benchmark's settling time, not a wait for a condition
	read := func() []netlab.Counters {
		out := make([]netlab.Counters, n)
		for i, h := range hosts {
			c, err := h.Counters()
			if err != nil {
				t.Fatal(err)
			}
			out[i] = c
		}
		return out
	}
	before, start := read(), time.Now()
	time.Sleep(modelWindow) // the measuring window
	after, secs := read(), time.Since(start).Seconds()
	out := make([]rates, n)
	for i := range out {
		out[i] = rates{float64(after[i].Received-before[i].Received) / secs, float64(after[i].Sent-before[i].Sent) / secs}
	}
	for _, b := range k.Brokers {
		if !b.Running() {
			t.Fatalf("broker %s stopped during the measurement", b.Pod)
		}
	}
	return out
}

func withPlan(p *v1alpha1.AnalyticsPipeline, pl v1alpha1.Plan) *v1alpha1.AnalyticsPipeline {
	p = p.DeepCopy()
	p.Status.Plan = &pl
	return p
}

func mib(v float64) string { return fmt.Sprintf("%.2f MiB/s", v/(1<<20)) }

// TestBandwidthModel takes some three minutes of both cores and root: `make lab` runs it
// (STRATA_LAB_MODEL=1), and prints its table.
func TestBandwidthModel(t *testing.T) {
	if os.Getenv("STRATA_LAB_MODEL") == "" {
		t.Skip("the bandwidth model against shaped links runs in make lab (STRATA_LAB_MODEL=1): minutes of both cores")
	}
	var table strings.Builder
	fmt.Fprintf(&table, "%-10s %-9s %-18s %-12s %-12s %-12s %-12s\n", "brokers", "broker", "plan bottleneck",
		"recv plan", "recv lab", "send plan", "send lab")

	for _, n := range modelBrokers() {
		t.Run(fmt.Sprintf("%d brokers", n), func(t *testing.T) {
			p := modelPipeline(n)
			pl, err := plan.Fresh(p, gen.APITiers())
			if err != nil {
				t.Fatal(err)
			}
			measured := measureBrokers(t, p, pl)
			wantRecv, wantSend := float64(pl.BrokerReceiveBytesPerSecond), float64(pl.BrokerSendBytesPerSecond)
			for i, m := range measured {
				fmt.Fprintf(&table, "%-10d %-9d %-18s %-12s %-12s %-12s %-12s\n", n, i, pl.Bottleneck,
					mib(wantRecv), mib(m.received), mib(wantSend), mib(m.sent))
			}
			switch n {
			case 3:
				if pl.Bottleneck != v1alpha1.BottleneckNone {
					t.Errorf("3 brokers: the plan names %s, want %s", pl.Bottleneck, v1alpha1.BottleneckNone)
				}
				for i, m := range measured {
					for _, c := range []struct {
						dir        string
						got, model float64
					}{{"received", m.received, wantRecv}, {"sent", m.sent, wantSend}} {
						if d := (c.got - c.model) / c.model; d > 0.10 || d < -0.10 {
							t.Errorf("broker %d %s %s, the plan %s: %+.1f %%", i, c.dir, mib(c.got), mib(c.model), 100*d)
						}
					}
				}
			case 2:
				if pl.Bottleneck != "KafkaBrokerNetwork" {
					t.Errorf("2 brokers: the plan names %s, want KafkaBrokerNetwork", pl.Bottleneck)
				}
				// The plan's ceiling: its share (target utilization) of the usable link.
				planned := float64(pl.LinkUsableBytesPerSecond) * float64(p.Spec.Network.TargetUtilizationPercent) / 100
				for i, m := range measured {
					// Saturated: the links run at or above the plan's ceiling, and the brokers still
					// carry well short of what the workload needs (the producers fall behind, acks=all).
					if m.sent < 0.95*planned || m.sent > 0.9*wantSend {
						t.Errorf("broker %d sends %s: want at least the plan's ceiling %s and short of the %s the workload needs",
							i, mib(m.sent), mib(planned), mib(wantSend))
					}
				}
			}
		})
	}
	t.Logf("the bandwidth model against real brokers on %s links (record %d B, %d records/s, RF 2, C = I):\n%s",
		mib(linkBytes), recordBytes, modelRecords, table.String())
	if f := os.Getenv("STRATA_LAB_MODEL_TABLE"); f != "" {
		if err := os.WriteFile(f, []byte(table.String()), 0o600); err != nil {
			t.Error(err)
		}
	}
}

// modelBrokers are the scenarios' broker counts; STRATA_LAB_MODEL_BROKERS=3 runs one.
func modelBrokers() []int32 {
	switch os.Getenv("STRATA_LAB_MODEL_BROKERS") {
	case "3":
		return []int32{3}
	case "2":
		return []int32{2}
	}
	return []int32{3, 2}
}
