package autoscale

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// BrokerSafety says whether brokers may leave the cluster now. Reason is empty when they may;
// otherwise it names what holds a scale-down back and Message says it with Strimzi's words.
//
// The autoscaler removes brokers only by lowering the broker KafkaNodePool's replicas. Strimzi
// (1.x) then checks whether the brokers to go still hold partition replicas; when they do, it
// keeps them, sets a Warning condition (reason ScaleDownPreventionCheck) on the Kafka, and —
// with spec.cruiseControl.autoRebalance in remove-brokers mode, which the operator always
// configures for two or more brokers — runs a remove-brokers rebalance that moves the replicas
// off them (status.autoRebalance.state RebalanceOnScaleDown, a KafkaRebalance named after the
// cluster); only then are the brokers removed. So the autoscaler lowers replicas by one step,
// and lowers them no further while that is under way.
type BrokerSafety struct {
	Reason, Message string
	// Joining is how many brokers were added and do not carry traffic yet: Strimzi's
	// add-brokers auto-rebalance (Kafka status.autoRebalance, state RebalanceOnScaleUp, mode
	// add-brokers) has not moved their partitions onto them. The others carry all the traffic.
	Joining int32
	// Leaving is how many brokers Strimzi is removing now: its remove-brokers auto-rebalance runs
	// (status.autoRebalance.state RebalanceOnScaleDown, the brokers of its remove-brokers
	// mode), or the pool still runs more brokers than its replicas. Strimzi carries such a
	// removal to its end whatever the pool asks for meanwhile (reversal.go), so no broker is
	// asked back until it has: Recommend holds broker scale-ups while Leaving > 0.
	Leaving int32
	// LeavingWhy says what removes them, for the scale-up held back.
	LeavingWhy string
	// Settled is when Strimzi's last auto-rebalance ended (status.autoRebalance.lastTransitionTime
	// with state Idle): after a scale-up, when the new brokers began to carry traffic. Zero when
	// unknown.
	Settled time.Time
	// Rebalances: Strimzi reports auto-rebalances on this cluster (the Kafka has a
	// status.autoRebalance, which Strimzi writes, Idle at first, once the cluster has Cruise
	// Control and auto-rebalancing): a scale-up will show as brokers joining, then settled.
	Rebalances bool
}

// StrimziSafety reads what Strimzi reports on the Kafka cluster, the broker pool and the
// cluster's KafkaRebalances (templates are skipped). Objects not there yet hold nothing back:
// a cluster Strimzi has not reconciled has no data to lose.
func StrimziSafety(kafka, brokerPool *unstructured.Unstructured, rebalances []*unstructured.Unstructured) BrokerSafety {
	auto := readAutoRebalance(kafka)
	s := strimziSafety(kafka, auto, brokerPool, rebalances)
	s.Rebalances = auto.state != ""
	if auto.state == "Idle" {
		// Strimzi writes the time as RFC 3339 in UTC; one it cannot parse leaves it unknown.
		s.Settled, _ = time.Parse(time.RFC3339, auto.at)
		// Brokers added in the last reconciliation wait, Idle, for the auto-rebalancing step
		// that follows it (KafkaRebalanceUtils.updateKafkaAutoRebalanceStatus keeps them in the
		// add-brokers mode until then): they carry nothing yet.
		s.Joining = auto.addBrokers
	}
	return s
}

// autoRebalance is the Kafka's status.autoRebalance (Strimzi 1.2.0, the Kafka CRD): its state,
// when it last changed, and how many brokers its add-brokers mode lists (those of the current
// or a queued auto-rebalance).
type autoRebalance struct {
	state, at                 string
	addBrokers, removeBrokers int32
}

func readAutoRebalance(kafka *unstructured.Unstructured) autoRebalance {
	var a autoRebalance
	if kafka == nil {
		return a
	}
	m, _, _ := unstructured.NestedMap(kafka.Object, "status", "autoRebalance")
	a.state, _ = m["state"].(string)
	a.at, _ = m["lastTransitionTime"].(string)
	modes, _ := m["modes"].([]any)
	for _, mode := range modes {
		mm, _ := mode.(map[string]any)
		ids, _ := mm["brokers"].([]any)
		switch mm["mode"] {
		case "add-brokers":
			a.addBrokers = int32(len(ids))
		case "remove-brokers":
			a.removeBrokers = int32(len(ids))
		}
	}
	return a
}

func strimziSafety(kafka *unstructured.Unstructured, auto autoRebalance, brokerPool *unstructured.Unstructured,
	rebalances []*unstructured.Unstructured) BrokerSafety {
	if kafka != nil {
		if auto.state != "" && auto.state != "Idle" {
			s := BrokerSafety{Reason: "RebalanceRunning",
				Message: fmt.Sprintf("Strimzi's auto-rebalance of Kafka %s is %s", kafka.GetName(), auto.state)}
			switch auto.state {
			case "RebalanceOnScaleUp":
				s.Joining = auto.addBrokers
			case "RebalanceOnScaleDown":
				s.Leaving, s.LeavingWhy = max(auto.removeBrokers, 1), s.Message
			}
			return s
		}
		conds, _, _ := unstructured.NestedSlice(kafka.Object, "status", "conditions")
		for _, c := range conds {
			m, _ := c.(map[string]any)
			if m["type"] == "Warning" && m["reason"] == "ScaleDownPreventionCheck" && m["status"] != "False" {
				return BrokerSafety{Reason: "ScaleDownBlocked", Message: fmt.Sprintf("Strimzi reports on Kafka %s: %v", kafka.GetName(), m["message"])}
			}
		}
	}
	if brokerPool != nil {
		want, ok, _ := unstructured.NestedInt64(brokerPool.Object, "spec", "replicas")
		ids, _, _ := unstructured.NestedSlice(brokerPool.Object, "status", "nodeIds")
		if ok && int64(len(ids)) > want {
			return BrokerSafety{Reason: "ScaleDownInProgress", Message: fmt.Sprintf("KafkaNodePool %s still runs %d brokers for %d replicas: "+
				"Strimzi has not finished the previous scale-down", brokerPool.GetName(), len(ids), want),
				Leaving: int32(int64(len(ids)) - want), LeavingWhy: fmt.Sprintf("KafkaNodePool %s still runs %d brokers for %d replicas",
					brokerPool.GetName(), len(ids), want)}
		}
	}
	var running, stuck []string
	for _, rb := range rebalances {
		if rb.GetAnnotations()["strimzi.io/rebalance-template"] == "true" {
			continue
		}
		for _, c := range RebalanceConditions(rb) {
			switch {
			case c.Running():
				running = append(running, rb.GetName()+" "+c.Type)
			case c.Ended():
				stuck = append(stuck, rb.GetName()+" "+c.Type)
			}
		}
	}
	sort.Strings(running)
	sort.Strings(stuck)
	switch {
	case len(running) > 0:
		return BrokerSafety{Reason: "RebalanceRunning", Message: "KafkaRebalance " + strings.Join(running, ", ")}
	case len(stuck) > 0:
		return BrokerSafety{Reason: "RebalanceNotReady", Message: "KafkaRebalance " + strings.Join(stuck, ", ") +
			": its partition moves have not completed"}
	}
	return BrokerSafety{}
}

// SafetyUnknown is the safety when what Strimzi reports cannot be read: no broker leaves on a
// guess (scale-ups are never held back).
func SafetyUnknown(why string) BrokerSafety {
	return BrokerSafety{Reason: "SafetyUnknown", Message: why}
}
