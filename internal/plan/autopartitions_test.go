package plan

import (
	"fmt"
	"testing"

	"github.com/strata-dev/strata/api/v1alpha1"
)

// partitionsAndBrokers' rounds, with broker plans given by table: which counts it plans, what it
// returns, and whose reasons it keeps.
func TestPartitionsAndBrokersRounds(t *testing.T) {
	cases := []struct {
		name           string
		fixed          int32 // spec.kafka.topic.partitions
		cores          int32 // executors × cores
		brokersMax     int32
		brokersFor     map[int32]int32
		wantPartitions int32
		wantBrokers    int32
		wantPlanned    []int32 // the partition counts planned, in order
	}{
		{"even at once", 0, 20, 6, map[int32]int32{20: 4}, 20, 4, []int32{20}},
		{"rounded up once", 0, 25, 6, map[int32]int32{25: 3, 27: 3}, 27, 3, []int32{25, 27}},
		// 28 is a multiple of 4, so 4 carry it; they may not all be needed: 3 then take 27.
		{"the brokers follow the partitions", 0, 25, 6, map[int32]int32{25: 4, 28: 3, 27: 3}, 27, 3, []int32{25, 28, 27}},
		// 9,999 on 7 brokers would be 10,003, over the cap, and no multiple of 7 lies between:
		// the cores themselves, with the brokers planned for them.
		{"over the cap", 0, 9999, 10, map[int32]int32{9999: 7}, 9999, 7, []int32{9999}},
		// 9,997 rounds up to 10,000 on 8 brokers; 7 then carry them, but 9,997 rounded up to a
		// multiple of 7 is 10,003: back to the cores and the first round's plan.
		{"over the cap later", 0, 9997, 10, map[int32]int32{9997: 8, 10000: 7}, 9997, 8, []int32{9997, 10000}},
		{"fixed", 25, 20, 6, map[int32]int32{25: 3}, 25, 3, []int32{25}},
		// A planner that broke the monotonicity the rounds rely on (B grows back) must not hang
		// them: brokers.max + 1 rounds, and the brokers returned are the ones planned from the
		// partitions returned.
		{"bounded", 0, 25, 3, map[int32]int32{25: 3, 27: 2, 26: 3}, 26, 3, []int32{25, 27, 26, 27, 26}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var planned []int32
			plan := func(p int32, why *reasons) brokerPlan {
				planned = append(planned, p)
				b, ok := c.brokersFor[p]
				if !ok {
					t.Fatalf("planned brokers for %d partitions, which the table lacks", p)
				}
				why.add("planned from %d", p)
				return brokerPlan{count: b}
			}
			k := v1alpha1.KafkaSpec{Brokers: v1alpha1.Range{Min: 1, Max: c.brokersMax}, Topic: v1alpha1.TopicSpec{Partitions: c.fixed}}
			var why reasons
			p, b := partitionsAndBrokers(k, c.cores, 1, 0, plan, &why)
			if p != c.wantPartitions || b.count != c.wantBrokers {
				t.Errorf("%d partitions on %d brokers, want %d on %d", p, b.count, c.wantPartitions, c.wantBrokers)
			}
			if fmt.Sprint(planned) != fmt.Sprint(c.wantPlanned) {
				t.Errorf("planned from %v, want %v", planned, c.wantPlanned)
			}
			if want := fmt.Sprintf("planned from %d", p); why.String() != want {
				t.Errorf("reasons %q, want only the returned plan's %q", why.String(), want)
			}
		})
	}
}
