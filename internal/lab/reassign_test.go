package lab

import (
	"fmt"
	"testing"
)

// Moves are batched as Cruise Control's executor bounds them: no broker gains or loses more than
// the concurrency at once, every move is in exactly one batch, in order.
func TestReassignmentBatches(t *testing.T) {
	current := reassignmentPlan{Partitions: []partitionMove{
		{Partition: 0, Replicas: []int{0, 1}}, {Partition: 1, Replicas: []int{1, 0}}, {Partition: 2, Replicas: []int{0, 1}},
		{Partition: 3, Replicas: []int{1, 0}}, {Partition: 4, Replicas: []int{0, 1}}, {Partition: 5, Replicas: []int{1, 0}},
	}}
	proposed := reassignmentPlan{Partitions: []partitionMove{
		{Partition: 0, Replicas: []int{2, 0}}, {Partition: 1, Replicas: []int{0, 1}}, {Partition: 2, Replicas: []int{1, 2}},
		{Partition: 3, Replicas: []int{2, 1}}, {Partition: 4, Replicas: []int{0, 1}}, {Partition: 5, Replicas: []int{1, 2}},
	}}
	moves, bytes := changes(current, proposed, map[int]int64{0: 10, 1: 10, 2: 20, 3: 30, 4: 40, 5: 50})
	// Partition 1 only swaps its leader's place and 4 keeps its replicas: neither copies data; 1
	// still is a move (its preferred leader changes), 4 is none.
	if len(moves) != 5 || bytes != 10+20+30+50 {
		t.Fatalf("%d moves, %d bytes; want 5 moves copying 110 bytes to broker 2", len(moves), bytes)
	}
	batches := batch(moves, 2)
	var got []string
	for _, b := range batches {
		into := map[int]int{}
		for _, m := range b {
			got = append(got, fmt.Sprint(m.Partition))
			for _, x := range m.gains {
				if into[x]++; into[x] > 2 {
					t.Errorf("batch %v: broker %d gains more than 2", b, x)
				}
			}
		}
	}
	if fmt.Sprint(got) != "[0 1 2 3 5]" || len(batches) != 2 {
		t.Errorf("batches %v (%d), want every move once, in order, in 2 batches", got, len(batches))
	}
}
