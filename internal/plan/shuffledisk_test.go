package plan_test

import (
	"fmt"
	"math/big"
	"math/rand"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/internal/plan"
	"github.com/strata-dev/strata/internal/testutil/gen"
)

// slowHDD is a dynamic HDD tier whose volumes sustain 20 MB/s whatever their size: under the
// 22.57 MB/s each of the example's four executors writes, at any size.
func slowHDD(opts ...gen.TierOption) v1alpha1.StorageTier {
	return gen.Tier("hdd-slow", v1alpha1.MediumHDD, "20M", "20M", "0.045", opts...)
}

// The executors' shuffle volumes against what they write. The example's four executors each
// read, and so write to each shuffle volume, 90.28 MB/s / 4 = 22.57 MB/s; at the 80 % target a
// volume must sustain 28.2125 MB/s. At its processing rate (4,000 records/s of 9,028 B) an
// executor writes 36.112 MB/s, which its volumes sustain too, so that they keep up with it when
// the autoscaler adds executors. An st1 volume sustains 40 MB/s per TiB, so 125Gi gives 4.88
// MB/s and 36.112 MB/s needs 0.9028 TiB: 924.47 GiB, claimed as 925Gi (36.13 MB/s).
func TestShuffleVolumesSustainTheExecutorsWrites(t *testing.T) {
	cases := []struct {
		name                  string
		change                func(*v1alpha1.AnalyticsPipelineSpec)
		tiers                 []v1alpha1.StorageTier
		spill, data           string // the claims the plan makes
		executors             int32
		sustained             int64 // the shuffle data row's share of its volume's bandwidth
		dataCost, spillCost   string
		bottleneck, unsatisfy string // "" for None; a substring of Unsatisfied
	}{{
		name:   "st1 at its 125Gi minimum is sized up to sustain the writes",
		change: func(s *v1alpha1.AnalyticsPipelineSpec) { s.Spark.Shuffle.DataSize = ptrQ("125Gi") },
		tiers:  realTiers(100),
		spill:  "20Gi", data: "925Gi", executors: 4,
		sustained: 36132812,                      // 40 MB/s × 925/1024
		dataCost:  "199.80", spillCost: "345.60", // 925 × 4 × 0.054; four whole 400Gi NVMe disks
	}, {
		name:  "a claim below st1's minimum is sized up past it",
		tiers: realTiers(100),
		spill: "20Gi", data: "925Gi", executors: 4, sustained: 36132812,
		dataCost: "199.80", spillCost: "345.60",
	}, {
		name: "an executor never writes more than its link carries",
		change: func(s *v1alpha1.AnalyticsPipelineSpec) {
			s.Spark.MessagesPerSecondPerExecutor = 1_000_000 // "more than enough", as the e2e suite says
		},
		tiers: realTiers(100),
		// 2 executors; at its processing rate one would write 9 GB/s, but it reads (and so writes)
		// at most its 112.5 MB/s usable link: 2880Gi exactly at 40 MB/s per TiB.
		spill: "20Gi", data: "2880Gi", executors: 2, sustained: 112500000,
		dataCost: "311.04", spillCost: "172.80",
	}, {
		name:   "a claim larger than needed is kept",
		change: func(s *v1alpha1.AnalyticsPipelineSpec) { s.Spark.Shuffle.DataSize = ptrQ("1Ti") },
		tiers:  realTiers(100),
		spill:  "20Gi", data: "1Ti", executors: 4, sustained: 40000000,
		dataCost: "221.18", spillCost: "345.60",
	}, {
		name: "a small write rate keeps st1's minimum",
		change: func(s *v1alpha1.AnalyticsPipelineSpec) {
			s.Workload = v1alpha1.WorkloadSpec{MessagesPerSecond: 1000, MessageBytes: 1000, Producers: 1}
		},
		tiers: realTiers(100),
		// 2 executors write 0.5 MB/s each, 4 MB/s at their processing rate, which 125Gi (4.88
		// MB/s) sustains.
		spill: "20Gi", data: "125Gi", executors: 2, sustained: 4882812,
		dataCost: "13.50", spillCost: "172.80",
	}, {
		name:  "a fast tier is unchanged",
		tiers: gen.APITiers(), // hdd-st1 without AWS's rules: 500 MB/s at any size
		spill: "20Gi", data: "40Gi", executors: 4, sustained: 500000000,
		dataCost: "8.64", spillCost: "17.28",
	}, {
		name: "spill and data sharing an st1 volume size it for both writes",
		change: func(s *v1alpha1.AnalyticsPipelineSpec) {
			s.Spark.Shuffle.SpillTier, s.Spark.Shuffle.DataTier = "hdd-st1", "hdd-st1"
		},
		tiers: realTiers(100),
		// One volume takes 2 × 22.57 MB/s (56.425 MB/s at 80 %), 2 × 36.112 MB/s at the
		// executor's processing rate: 1848.93 GiB, so 1849Gi of which the spill keeps its 125Gi
		// and the shuffle data takes 1724Gi; each role gets half.
		spill: "125Gi", data: "1724Gi", executors: 4, sustained: 36113281,
		dataCost: "372.38", spillCost: "27.00",
	}, {
		name: "a non-scaling tier too slow gets more executors",
		change: func(s *v1alpha1.AnalyticsPipelineSpec) {
			s.Spark.Shuffle.DataTier = "hdd-slow"
		},
		tiers: append(gen.APITiers(), slowHDD()),
		// 90.28 MB/s at 80 % of 20 MB/s per volume: 5.64, so 6 executors.
		spill: "20Gi", data: "40Gi", executors: 6, sustained: 20000000,
		dataCost: "10.80", spillCost: "25.92",
	}, {
		name: "a non-scaling tier too slow past spec.spark.executors.max",
		change: func(s *v1alpha1.AnalyticsPipelineSpec) {
			s.Spark.Shuffle.DataTier = "hdd-slow"
			s.Spark.Executors.Max = 5
		},
		tiers: append(gen.APITiers(), slowHDD()),
		spill: "20Gi", data: "40Gi", executors: 5, sustained: 20000000,
		dataCost: "9.00", spillCost: "21.60",
		bottleneck: v1alpha1.StageSparkShuffleDisk,
		unsatisfy:  "the shuffle data volume (spec.spark.shuffle.dataTier, spec.spark.shuffle.dataSize) under 80% of the 20 MB/s",
	}, {
		name: "a scaling tier whose ceiling is too low is claimed at its ceiling",
		change: func(s *v1alpha1.AnalyticsPipelineSpec) {
			s.Spark.Shuffle.DataTier = "hdd-slow"
			s.Spark.Executors.Max = 4
		},
		// 40 MB/s per TiB up to 20 MB/s: 512Gi reaches the ceiling, and no size sustains more.
		tiers: append(gen.APITiers(), slowHDD(gen.SetThroughputPerTiB("40M", "40M"), gen.SetMinVolumeSize("125Gi"))),
		spill: "20Gi", data: "512Gi", executors: 4, sustained: 20000000,
		dataCost: "92.16", spillCost: "17.28",
		bottleneck: v1alpha1.StageSparkShuffleDisk,
		unsatisfy:  "sustains at any size (from 512Gi up: the plan claims that much)",
	}, {
		name: "a local tier too slow for the spill names spec.spark.shuffle.spillTier",
		change: func(s *v1alpha1.AnalyticsPipelineSpec) {
			s.Spark.Shuffle.SpillTier = "hdd-local"
			s.Spark.Executors.Max = 4
		},
		// Whole local disks of 400Gi that sustain 20 MB/s each: no claim size changes that.
		tiers: append(gen.APITiers(), gen.Tier("hdd-local", v1alpha1.MediumHDD, "200M", "20M", "0.05",
			gen.SetLocal(nil, "400Gi", "/mnt/hdd0"), gen.SetThroughputPerTiB("50M", "50M"))),
		spill: "20Gi", data: "40Gi", executors: 4, sustained: 500000000,
		dataCost: "8.64", spillCost: "80.00",
		bottleneck: v1alpha1.StageSparkShuffleDisk,
		unsatisfy: "the spill volume (spec.spark.shuffle.spillTier, spec.spark.shuffle.spillSize) under 80% of the 19.53 MB/s " +
			"a volume of StorageTier \"hdd-local\" sustains as a whole local disk (spec.local.capacityPerPath 400Gi)",
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := gen.Pipeline(gen.SetProducers(2))
			in.Spec.Elasticsearch.Storage.Size = q("400Gi")
			if c.change != nil {
				c.change(&in.Spec)
			}
			p := mustCompute(t, in, c.tiers)
			spill, data := role(p, v1alpha1.RoleSparkSpill), role(p, v1alpha1.RoleSparkShuffleData)
			if spill.SizePerReplica.String() != c.spill || data.SizePerReplica.String() != c.data {
				t.Errorf("claims: spill %s, data %s; want %s, %s", spill.SizePerReplica.String(), data.SizePerReplica.String(), c.spill, c.data)
			}
			if p.Executors != c.executors {
				t.Errorf("executors %d, want %d", p.Executors, c.executors)
			}
			if data.SustainedWriteBytesPerSecond != c.sustained {
				t.Errorf("shuffle data volume sustains %d B/s, want %d", data.SustainedWriteBytesPerSecond, c.sustained)
			}
			if data.MonthlyCost != c.dataCost || spill.MonthlyCost != c.spillCost {
				t.Errorf("costs: spill %s, data %s; want %s, %s", spill.MonthlyCost, data.MonthlyCost, c.spillCost, c.dataCost)
			}
			want := c.bottleneck
			if want == "" {
				want = v1alpha1.BottleneckNone
			}
			if p.Bottleneck != want || !strings.Contains(p.Unsatisfied, c.unsatisfy) {
				t.Errorf("bottleneck %s (%q), want %s naming %q", p.Bottleneck, p.Unsatisfied, want, c.unsatisfy)
			}
			if p.StorageUnsatisfied != "" {
				t.Errorf("storage unsatisfied: %q", p.StorageUnsatisfied)
			}
			if problem := planProblem(in, p); problem != "" {
				t.Error(problem)
			}
		})
	}
}

// The sample's plan: 925Gi of st1 per executor, and the SparkShuffleDisk stage carries at least
// what SparkProcessing does (4 × 4,000 records/s).
func TestShuffleDiskStage(t *testing.T) {
	in := gen.Pipeline(gen.SetProducers(2))
	in.Spec.Elasticsearch.Storage.Size = q("400Gi")
	p := mustCompute(t, in, realTiers(100))
	// 36,132,812.5 B/s × 4 executors × 10,000 records/s ÷ 90.28 MB/s.
	if got := stageCap(t, p, v1alpha1.StageSparkShuffleDisk); got != 16009 {
		t.Errorf("SparkShuffleDisk = %d msgs/s, want 16009", got)
	}
	if p.MaxMessagesPerSecond != 16000 || p.Bottleneck != v1alpha1.BottleneckNone {
		t.Errorf("max %d, bottleneck %s; want SparkProcessing's 16000, None", p.MaxMessagesPerSecond, p.Bottleneck)
	}
	if got := stageCap(t, mustCompute(t, in, gen.APITiers()), v1alpha1.StageSparkShuffleDisk); got != 221533 {
		t.Errorf("SparkShuffleDisk on 500 MB/s volumes = %d msgs/s, want 221533", got)
	}
	// More executors (the autoscaler raising executors.min) carry more: the claims do not
	// shrink with each executor's share of the planned rate.
	in.Spec.Spark.Executors.Min = 8
	if got := stageCap(t, mustCompute(t, in, realTiers(100)), v1alpha1.StageSparkShuffleDisk); got != 32018 {
		t.Errorf("SparkShuffleDisk with 8 executors = %d msgs/s, want 32018", got)
	}
}

// shuffleDiskProblem checks the executors' shuffle volumes: the claims are never below the
// spec's, and each volume sustains the executor's writes within the target unless a reason
// says no executor count does (and the SparkShuffleDisk stage is then under its target).
func shuffleDiskProblem(s v1alpha1.AnalyticsPipelineSpec, p v1alpha1.Plan) string {
	short := strings.Contains(p.Unsatisfied, "keeps each executor's writes to")
	target := big.NewInt(int64(s.Network.TargetUtilizationPercent))
	for _, r := range p.Storage {
		spec := s.Spark.Shuffle.SpillSize
		switch r.Role {
		case v1alpha1.RoleSparkShuffleData:
			spec = *s.Spark.Shuffle.DataSize
		case v1alpha1.RoleSparkSpill:
		default:
			continue
		}
		if r.SizePerReplica.Cmp(spec) < 0 {
			return fmt.Sprintf("%s claims %s, less than the spec's %s", r.Role, r.SizePerReplica.String(), spec.String())
		}
		if r.WriteBytesPerSecond != p.ExecutorReceiveBytesPerSecond {
			return fmt.Sprintf("%s writes %d B/s, not what an executor reads (%d)", r.Role, r.WriteBytesPerSecond, p.ExecutorReceiveBytesPerSecond)
		}
		// write × 100 ≤ sustained × target, up to the floors of both.
		lhs := new(big.Int).Mul(big.NewInt(r.WriteBytesPerSecond), big.NewInt(100))
		rhs := new(big.Int).Mul(big.NewInt(r.SustainedWriteBytesPerSecond+1), target)
		if !short && lhs.Cmp(rhs) > 0 {
			return fmt.Sprintf("%s writes %d B/s to a volume that sustains %d B/s, over the %d%% target, and no reason says so",
				r.Role, r.WriteBytesPerSecond, r.SustainedWriteBytesPerSecond, target)
		}
	}
	if short {
		capacity := int64(-1)
		for _, st := range p.Stages {
			if st.Name == v1alpha1.StageSparkShuffleDisk {
				capacity = st.MaxMessagesPerSecond
			}
		}
		lhs := new(big.Int).Mul(big.NewInt(capacity), target)
		if lhs.Cmp(new(big.Int).Mul(big.NewInt(s.Workload.MessagesPerSecond), big.NewInt(100))) >= 0 {
			return fmt.Sprintf("a reason says the shuffle volumes fall short, but SparkShuffleDisk carries %d msgs/s: %q", capacity, p.Unsatisfied)
		}
	}
	return ""
}

// Over random pipelines with random shuffle placements on the real tiers (st1's bandwidth scales
// with size), every plan keeps its invariants, the shuffle checks among them, and a claim the
// plan sized up is the smallest whole number of GiB that sustains the writes, at the planned
// rate within the target and at the executor's processing rate (or reaches the ceiling).
func TestPropertyShuffleVolumesSustainTheirWrites(t *testing.T) {
	rng := rand.New(rand.NewSource(29))
	tierNames := []string{"nvme-local", "hdd-st1"}
	grown := 0
	for i := 0; i < 3000; i++ {
		in := randomPipeline(rng)
		sh := &in.Spec.Spark.Shuffle
		sh.SpillTier, sh.DataTier = tierNames[rng.Intn(2)], tierNames[rng.Intn(2)]
		sh.SpillSize = *resource.NewQuantity((1+rng.Int63n(399))<<30, resource.BinarySI)
		d := *resource.NewQuantity((1+rng.Int63n(2000))<<30, resource.BinarySI)
		sh.DataSize = &d
		if sh.DataTier == "nvme-local" {
			d = *resource.NewQuantity((1+rng.Int63n(399))<<30, resource.BinarySI)
			sh.DataSize = &d
		}
		p, err := plan.Fresh(in, realTiers(1000))
		if err != nil {
			continue // memory splits the planner refuses
		}
		if problem := planProblem(in, p); problem != "" {
			t.Fatalf("%s\nspec %+v", problem, in.Spec)
		}
		data := role(p, v1alpha1.RoleSparkShuffleData)
		if sh.DataTier != "hdd-st1" || sh.SpillTier == "hdd-st1" || data.SizePerReplica.Cmp(q("125Gi")) <= 0 ||
			data.SizePerReplica.Cmp(*sh.DataSize) <= 0 {
			continue
		}
		grown++
		// One GiB less would not sustain the writes (40 MB/s per TiB, at most 500 MB/s).
		less := new(big.Rat).SetFrac64((data.SizePerReplica.Value()>>30)-1, 1024)
		less.Mul(less, big.NewRat(40_000_000, 1))
		// The write rate is floored: one byte more bounds it.
		need := new(big.Rat).SetFrac64((data.WriteBytesPerSecond+1)*100, int64(in.Spec.Network.TargetUtilizationPercent))
		w := plan.Defaults(in).Spec.Workload
		atCapacity := new(big.Rat).SetFrac(
			new(big.Int).Mul(big.NewInt(in.Spec.Spark.MessagesPerSecondPerExecutor*w.MessageBytes), big.NewInt(w.ConsumerMessagesPerSecond)),
			big.NewInt(w.MessagesPerSecond))
		// At most the executor's usable link: bits ÷ 8 × efficiency.
		usable := new(big.Rat).SetFrac64(in.Spec.Network.LinkBitsPerSecond.Value()*int64(in.Spec.Network.EfficiencyPercent), 800)
		if usable.Cmp(atCapacity) < 0 {
			atCapacity = usable
		}
		if atCapacity.Cmp(need) > 0 {
			need = atCapacity
		}
		if less.Cmp(need) >= 0 && less.Cmp(big.NewRat(500_000_000, 1)) < 0 {
			t.Fatalf("shuffle data claimed %s for %d B/s: one GiB less sustains it", data.SizePerReplica.String(), data.WriteBytesPerSecond)
		}
	}
	if grown < 100 {
		t.Errorf("only %d plans grew a shuffle data claim", grown)
	}
}
