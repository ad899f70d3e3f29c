package plan_test

import (
	"math/big"
	"math/rand"
	"testing"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/internal/plan"
	"github.com/strata-dev/strata/internal/testutil/gen"
)

// Automatic partitions are executors × cores rounded up to a multiple of the planned brokers
// (issue 29): Kafka places whole partitions, so an uneven count makes one broker the
// bottleneck where an even one would not.
func TestAutomaticPartitions(t *testing.T) {
	cases := []struct {
		name                string
		opts                []gen.PipelineOption
		partitions, brokers int32
	}{
		// 25 leaders on 3 brokers put 9 on one, 8 % over the mean: 27 put 9 on each.
		{"25 executor cores on 3 brokers", []gen.PipelineOption{gen.SetExecutors(5, 5, 5), gen.SetBrokers(3, 3)}, 27, 3},
		{"already even stays", []gen.PipelineOption{gen.SetExecutors(4, 4, 5), gen.SetBrokers(4, 4)}, 20, 4},
		// The sample: 4 executors × 5 cores on the 3 brokers its link needs.
		{"the sample", nil, 21, 3},
		// More brokers than executor cores: each broker leads one partition.
		{"brokers.min above the cores", []gen.PipelineOption{gen.SetExecutors(1, 1, 2), gen.SetBrokers(4, 6)}, 4, 4},
		// 11 partitions need 6 brokers under the 90 MB/s planned per link (4 would lead 3 of 11
		// each: 93.6 MB/s out), 12 need 4 (3 of 12 each: 85.8 MB/s): the brokers follow the
		// partitions down to a fixed point.
		{"the brokers follow the partitions", []gen.PipelineOption{gen.SetExecutors(11, 11, 1), gen.SetWorkload(19000, 9028)}, 12, 4},
		// 9,995 rounds up to 9,996 within the cap; 10,000 would round up to 10,002, over it, and
		// no multiple of 3 lies between 10,000 and the cap: the cores themselves.
		{"just under MaxAutoPartitions", []gen.PipelineOption{gen.SetExecutors(1999, 1999, 5), gen.SetBrokers(3, 3)}, 9996, 3},
		{"at MaxAutoPartitions", []gen.PipelineOption{gen.SetExecutors(2000, 2000, 5), gen.SetBrokers(3, 3)}, 10000, 3},
		{"a fixed count is kept", []gen.PipelineOption{gen.SetExecutors(5, 5, 5), gen.SetBrokers(3, 3),
			gen.SetSpec(func(s *v1alpha1.AnalyticsPipelineSpec) { s.Kafka.Topic.Partitions = 25 })}, 25, 3},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := gen.Pipeline(append([]gen.PipelineOption{gen.SetProducers(2)}, c.opts...)...)
			p := mustCompute(t, in, gen.APITiers())
			if p.Partitions != c.partitions || p.Brokers != c.brokers {
				t.Errorf("partitions %d on %d brokers, want %d on %d", p.Partitions, p.Brokers, c.partitions, c.brokers)
			}
			if problem := planProblem(in, p); problem != "" {
				t.Error(problem)
			}
		})
	}
}

// For every accepted plan with automatic partitions: P ≥ executors × cores, B divides P unless
// rounding up would pass v1alpha1.MaxAutoPartitions, the busiest broker's share is then the
// mean, and the brokers are those planned from P (a fixed point: setting
// spec.kafka.topic.partitions to P plans the same brokers).
func TestPropertyAutomaticPartitionsSpreadEvenly(t *testing.T) {
	rng := rand.New(rand.NewSource(29))
	planned, capped := 0, 0
	for i := 0; i < 1500; i++ {
		in := randomPipeline(rng)
		in.Spec.Spark.Memory = gen.Pipeline().Spec.Spark.Memory
		if rng.Intn(4) == 0 {
			// Near the cap, where rounding up may pass it.
			e := &in.Spec.Spark.Executors
			e.Cores = 1 + rng.Int31n(16)
			e.Max = int32(v1alpha1.MaxAutoPartitions) / e.Cores
			e.Min = max(1, e.Max-rng.Int31n(3))
		}
		p, err := plan.Fresh(in, gen.APITiers())
		if err != nil {
			t.Fatalf("valid pipeline %+v: %v", in.Spec, err)
		}
		planned++
		s := plan.Defaults(in).Spec
		cores, parts, b := int64(p.Executors)*int64(p.ExecutorCores), int64(p.Partitions), int64(p.Brokers)
		if parts < cores || parts > v1alpha1.MaxAutoPartitions {
			t.Fatalf("%d partitions for %d executor cores (cap %d)\nspec %+v", parts, cores, v1alpha1.MaxAutoPartitions, in.Spec)
		}
		if parts%b != 0 {
			if (cores+b-1)/b*b <= v1alpha1.MaxAutoPartitions || parts != cores {
				t.Fatalf("%d partitions on %d brokers for %d executor cores: not a multiple, and not the cap's fallback\nspec %+v",
					parts, b, cores, in.Spec)
			}
			capped++
		} else {
			i := new(big.Int).Mul(big.NewInt(s.Workload.MessagesPerSecond), big.NewInt(s.Workload.MessageBytes))
			c := new(big.Int).Mul(big.NewInt(s.Workload.ConsumerMessagesPerSecond), big.NewInt(s.Workload.MessageBytes))
			r := big.NewInt(int64(p.ReplicationFactor))
			recv := new(big.Int).Quo(new(big.Int).Mul(i, r), big.NewInt(b)).Int64()
			send := new(big.Int).Quo(new(big.Int).Add(c, new(big.Int).Mul(i, new(big.Int).Sub(r, big.NewInt(1)))), big.NewInt(b)).Int64()
			if p.BrokerReceiveBytesPerSecond != recv || p.BrokerDiskWriteBytesPerSecond != recv || p.BrokerSendBytesPerSecond != send {
				t.Fatalf("%d partitions on %d brokers: the busiest receives %d, writes %d, sends %d; the mean is %d in, %d out",
					parts, b, p.BrokerReceiveBytesPerSecond, p.BrokerDiskWriteBytesPerSecond, p.BrokerSendBytesPerSecond, recv, send)
			}
		}
		fixed := in.DeepCopy()
		fixed.Spec.Kafka.Topic.Partitions = p.Partitions
		if q := mustCompute(t, fixed, gen.APITiers()); q.Brokers != p.Brokers {
			t.Fatalf("%d automatic partitions planned %d brokers, the same count fixed plans %d\nspec %+v",
				p.Partitions, p.Brokers, q.Brokers, in.Spec)
		}
	}
	if capped == 0 {
		t.Errorf("none of %d plans met the cap: the generator misses the fallback", planned)
	}
	t.Logf("%d plans, %d at the cap's fallback", planned, capped)
}

// The topic's partitions, which Kafka cannot remove, are planned as they are: with a topic grown
// to 60 partitions (executors scaled up), the plan for the sample's 4 executors keeps 60 and sizes
// retention.bytes, which Kafka applies per partition, for 60, as a spec fixing 60 would; planned
// for the 21 the executors alone ask for, each broker would keep nearly three times its share.
func TestRunningPartitionsArePlannedAsTheyAre(t *testing.T) {
	in := gen.Pipeline(gen.SetProducers(2))
	fresh := mustCompute(t, in, gen.APITiers())
	fixed := in.DeepCopy()
	fixed.Spec.Kafka.Topic.Partitions = 60
	want := mustCompute(t, fixed, gen.APITiers())
	for _, c := range []struct {
		name     string
		existing int32
		want     v1alpha1.Plan
	}{
		{"a topic with more partitions", 60, want},
		{"a topic with fewer: the rule's count", 12, fresh},
		{"no topic yet", 0, fresh},
	} {
		r, err := plan.Compute(in, gen.APITiers(), plan.Observed{Partitions: c.existing})
		got := r.Plan
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got.Partitions != c.want.Partitions || got.Brokers != c.want.Brokers ||
			got.Retention.KafkaRetentionBytes != c.want.Retention.KafkaRetentionBytes ||
			got.BrokerSendBytesPerSecond != c.want.BrokerSendBytesPerSecond {
			t.Errorf("%s: %d partitions, %d brokers, retention.bytes %d, busiest broker sends %d; want %d, %d, %d, %d",
				c.name, got.Partitions, got.Brokers, got.Retention.KafkaRetentionBytes, got.BrokerSendBytesPerSecond,
				c.want.Partitions, c.want.Brokers, c.want.Retention.KafkaRetentionBytes, c.want.BrokerSendBytesPerSecond)
		}
	}
	if want.Retention.KafkaRetentionBytes >= fresh.Retention.KafkaRetentionBytes {
		t.Errorf("retention.bytes %d for 60 partitions, not under the %d for %d: the case proves nothing",
			want.Retention.KafkaRetentionBytes, fresh.Retention.KafkaRetentionBytes, fresh.Partitions)
	}
	// A spec fixing fewer than the topic has is planned for the topic's too.
	fewer := in.DeepCopy()
	fewer.Spec.Kafka.Topic.Partitions = 30
	if got, err := plan.Compute(fewer, gen.APITiers(), plan.Observed{Partitions: 60}); err != nil || got.Plan.Partitions != 60 {
		t.Errorf("a fixed 30 on a topic of 60: %d partitions (%v), want 60", got.Plan.Partitions, err)
	}
}
