package chaos

import (
	"fmt"
	"sort"
)

// Kind is the kind of object an Event is about.
type Kind string

const (
	KindVolume     Kind = "PersistentVolume"
	KindClaim      Kind = "PersistentVolumeClaim"
	KindCleanupPod Kind = "CleanupPod"
	KindKafka      Kind = "Kafka"
	KindNodePool   Kind = "KafkaNodePool"
)

// Event is one change the API server reported, reduced to what the checks need.
type Event struct {
	// RV is the object's resourceVersion after the change (for a deletion: the deletion's).
	RV      uint64
	Kind    Kind
	Name    string // namespace/name, or name for cluster-scoped kinds
	Deleted bool

	// A volume's phase and the UID of the claim its claimRef names ("" without one).
	Phase    string
	ClaimUID string
	// A claim's UID and the Kafka cluster ID Strata recorded on it (AnnotationKafkaClusterID),
	// and the Kafka cluster it belongs to (strimzi.io/cluster).
	UID, ClusterID, Cluster string
	// A cleanup pod's volume (the volume's name; ClaimUID above is the claim whose data it wipes).
	Volume string
	// A Kafka's pause (strimzi.io/pause-reconciliation "true"), its status.clusterId (in
	// ClusterID above) and its name without the namespace is Cluster.
	Paused bool
	// A node pool's spec.replicas and how many nodes Strimzi reports it runs (status.nodeIds).
	Replicas, Nodes int64
}

// Violation is a broken promise, with the event that broke it.
type Violation struct {
	RV   uint64
	What string
}

func (v Violation) String() string { return fmt.Sprintf("rv %d: %s", v.RV, v.What) }

type volumeState struct{ phase, claim string }

type claimState struct{ uid, clusterID, cluster, namespace string }

type wipeKey struct{ volume, claim string }

// Replay orders events by resourceVersion and checks, in that order:
//   - a cleanup pod is created only for a volume that is Released by the claim whose data it
//     wipes, and only once that claim is gone: never for a Bound or claimed volume;
//   - a volume's data is wiped at most once per claim (at most one cleanup pod succeeds);
//   - a volume released by a claim is freed (claimRef removed, or Available) only after a
//     cleanup pod for that claim succeeded;
//   - a node pool never asks for more than one node fewer than Strimzi reports it runs: brokers
//     leave one at a time, each once the previous one is gone (plan.Compute's broker step),
//     and two at once could take every replica of a partition with them;
//   - a Kafka cluster never runs (exists unpaused) with a cluster ID other than the one recorded
//     on claims of its name that exist: Strimzi would format nothing, but its brokers would refuse
//     the old volumes, or worse, a new ID would be written over the recorded one.
//
// Volumes of a Retain tier are never wiped at all: Replay gets their names in retained.
func Replay(events []Event, retained map[string]bool) []Violation {
	sorted := append([]Event(nil), events...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].RV < sorted[j].RV })

	var out []Violation
	fail := func(e Event, format string, args ...any) {
		out = append(out, Violation{e.RV, fmt.Sprintf(format, args...)})
	}
	volumes := map[string]volumeState{}
	claims := map[string]claimState{} // by UID
	pods := map[string]string{}       // pod name -> last phase seen
	wipes := map[wipeKey]int{}

	for _, e := range sorted {
		switch e.Kind {
		case KindClaim:
			if e.Deleted {
				delete(claims, e.UID)
				continue
			}
			ns, _, _ := cutName(e.Name)
			claims[e.UID] = claimState{e.UID, e.ClusterID, e.Cluster, ns}
		case KindVolume:
			prev, seen := volumes[e.Name]
			if e.Deleted {
				delete(volumes, e.Name)
				continue
			}
			volumes[e.Name] = volumeState{e.Phase, e.ClaimUID}
			// Released by claim u, then no longer u's: freed (claimRef removed) or, wrongly,
			// given to another claim.
			if seen && prev.phase == "Released" && prev.claim != "" && e.ClaimUID != prev.claim {
				if retained[e.Name] {
					continue // a Retain tier's volume is freed by deleting it (or by hand), never wiped
				}
				if wipes[wipeKey{e.Name, prev.claim}] == 0 {
					fail(e, "volume %s freed without a successful wipe of claim %s's data", e.Name, prev.claim)
				}
			}
		case KindCleanupPod:
			last, seen := pods[e.Name]
			if e.Deleted {
				delete(pods, e.Name)
				continue
			}
			pods[e.Name] = e.Phase
			if !seen {
				if retained[e.Volume] {
					fail(e, "cleanup pod %s wipes %s, a volume of a Retain tier", e.Name, e.Volume)
				}
				if _, exists := claims[e.ClaimUID]; exists {
					fail(e, "cleanup pod %s wipes %s while claim %s still exists", e.Name, e.Volume, e.ClaimUID)
				}
				v := volumes[e.Volume]
				if v.phase != "Released" || v.claim != e.ClaimUID {
					fail(e, "cleanup pod %s wipes %s while the volume is %q with claim %q, not Released by claim %s",
						e.Name, e.Volume, v.phase, v.claim, e.ClaimUID)
				}
			}
			if e.Phase == "Succeeded" && last != "Succeeded" {
				k := wipeKey{e.Volume, e.ClaimUID}
				wipes[k]++
				if wipes[k] > 1 {
					fail(e, "volume %s wiped %d times for claim %s", e.Volume, wipes[k], e.ClaimUID)
				}
			}
		case KindNodePool:
			if !e.Deleted && e.Replicas < e.Nodes-1 {
				fail(e, "KafkaNodePool %s asks for %d nodes while Strimzi runs %d: more than one leaves at once", e.Name, e.Replicas, e.Nodes)
			}
		case KindKafka:
			if e.Deleted || e.Paused {
				continue
			}
			ns, _, _ := cutName(e.Name)
			for _, c := range claims {
				if c.namespace == ns && c.cluster == e.Cluster && c.clusterID != "" && c.clusterID != e.ClusterID {
					fail(e, "Kafka %s runs with cluster ID %q over claims that hold cluster %q's data", e.Name, e.ClusterID, c.clusterID)
					break
				}
			}
		}
	}
	return out
}

// cutName splits namespace/name.
func cutName(s string) (namespace, name string, ok bool) {
	for i := range len(s) {
		if s[i] == '/' {
			return s[:i], s[i+1:], true
		}
	}
	return "", s, false
}
