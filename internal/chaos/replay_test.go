package chaos

import (
	"strings"
	"testing"
)

// Builders for the events of one volume's life.
func claim(rv uint64, uid string) Event {
	return Event{RV: rv, Kind: KindClaim, Name: "ns/data-0", UID: uid}
}
func claimGone(rv uint64, uid string) Event {
	return Event{RV: rv, Kind: KindClaim, Name: "ns/data-0", UID: uid, Deleted: true}
}
func volume(rv uint64, phase, claimUID string) Event {
	return Event{RV: rv, Kind: KindVolume, Name: "pv-a", Phase: phase, ClaimUID: claimUID}
}
func pod(rv uint64, phase, claimUID string) Event {
	return Event{RV: rv, Kind: KindCleanupPod, Name: "cleanup-pv-a-" + claimUID, Volume: "pv-a", ClaimUID: claimUID, Phase: phase}
}
func keptClaim(rv uint64, uid, clusterID string) Event {
	return Event{RV: rv, Kind: KindClaim, Name: "ns/data-0-kafka", UID: uid, Cluster: "sensors", ClusterID: clusterID}
}
func kafka(rv uint64, paused bool, clusterID string) Event {
	return Event{RV: rv, Kind: KindKafka, Name: "ns/sensors", Cluster: "sensors", Paused: paused, ClusterID: clusterID}
}

func pool(rv uint64, replicas, nodes int64) Event {
	return Event{RV: rv, Kind: KindNodePool, Name: "ns/sensors-broker", Replicas: replicas, Nodes: nodes}
}

func TestReplay(t *testing.T) {
	// The life the controller promises: bound, released, wiped once, freed, bound again.
	good := []Event{
		volume(1, "Available", ""), claim(2, "u1"), volume(3, "Bound", "u1"), claimGone(4, "u1"),
		volume(5, "Released", "u1"), pod(6, "Pending", "u1"), pod(7, "Running", "u1"), pod(8, "Succeeded", "u1"),
		volume(9, "Released", ""), volume(10, "Available", ""), claim(11, "u2"), volume(12, "Bound", "u2"),
	}
	cases := []struct {
		name     string
		events   []Event
		retained map[string]bool
		want     []string // a substring of each violation, in order
	}{
		{name: "the promised life", events: good},
		{name: "the promised life, events out of order", events: reverse(good)},
		{name: "wiped while the claim exists", events: []Event{
			volume(1, "Bound", "u1"), claim(2, "u1"), volume(3, "Released", "u1"), pod(4, "Pending", "u1"),
		}, want: []string{"while claim u1 still exists"}},
		{name: "wiped while bound", events: []Event{
			claim(1, "u1"), volume(2, "Bound", "u1"), claimGone(3, "u1"), pod(4, "Pending", "u1"),
		}, want: []string{`while the volume is "Bound"`}},
		{name: "wiped for another claim", events: []Event{
			volume(1, "Released", "u1"), pod(2, "Pending", "u0"),
		}, want: []string{"not Released by claim u0"}},
		{name: "wiped twice", events: []Event{
			volume(1, "Released", "u1"), pod(2, "Succeeded", "u1"),
			{RV: 3, Kind: KindCleanupPod, Name: "cleanup-pv-a-u1", Volume: "pv-a", ClaimUID: "u1", Deleted: true},
			pod(4, "Succeeded", "u1"),
		}, want: []string{"wiped 2 times"}},
		{name: "freed without a wipe", events: []Event{
			volume(1, "Released", "u1"), volume(2, "Released", ""),
		}, want: []string{"freed without a successful wipe"}},
		{name: "freed after a failed wipe", events: []Event{
			volume(1, "Released", "u1"), pod(2, "Failed", "u1"), volume(3, "Available", ""),
		}, want: []string{"freed without a successful wipe"}},
		{name: "given to another claim", events: []Event{
			volume(1, "Released", "u1"), volume(2, "Bound", "u2"),
		}, want: []string{"freed without a successful wipe"}},
		{name: "a Retain tier's volume wiped", retained: map[string]bool{"pv-a": true}, events: []Event{
			volume(1, "Released", "u1"), pod(2, "Pending", "u1"),
		}, want: []string{"a volume of a Retain tier"}},
		{name: "a Retain tier's volume freed by hand", retained: map[string]bool{"pv-a": true}, events: []Event{
			volume(1, "Released", "u1"), volume(2, "Available", ""),
		}},
		{name: "a retained Kafka created paused, then given its ID", events: []Event{
			keptClaim(1, "k1", "id-A"), kafka(2, true, ""), kafka(3, true, "id-A"), kafka(4, false, "id-A"),
		}},
		{name: "a retained Kafka created unpaused", events: []Event{
			keptClaim(1, "k1", "id-A"), kafka(2, false, ""),
		}, want: []string{`runs with cluster ID "" over claims that hold cluster "id-A"`}},
		{name: "a retained Kafka unpaused before its ID", events: []Event{
			keptClaim(1, "k1", "id-A"), kafka(2, true, ""), kafka(3, false, ""), kafka(4, false, "id-A"),
		}, want: []string{`runs with cluster ID ""`}},
		{name: "brokers leave one at a time", events: []Event{
			pool(1, 4, 4), pool(2, 3, 4), pool(3, 3, 3), pool(4, 2, 3), pool(5, 2, 2), pool(6, 4, 2),
		}},
		{name: "two brokers leave at once", events: []Event{
			pool(1, 4, 4), pool(2, 3, 4), pool(3, 2, 4),
		}, want: []string{"asks for 2 nodes while Strimzi runs 4"}},
		{name: "a new Kafka over claims of none", events: []Event{
			keptClaim(1, "k1", ""), kafka(2, false, ""),
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := Replay(tc.events, tc.retained)
			if len(got) != len(tc.want) {
				t.Fatalf("violations %v, want %d: %v", got, len(tc.want), tc.want)
			}
			for i, w := range tc.want {
				if !strings.Contains(got[i].What, w) {
					t.Errorf("violation %d: %q, want it to say %q", i, got[i].What, w)
				}
			}
		})
	}
}

func reverse(events []Event) []Event {
	out := make([]Event, len(events))
	for i, e := range events {
		out[len(events)-1-i] = e
	}
	return out
}
