package autoscale

import (
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// What Strimzi reports of a KafkaRebalance, read in one place: the autoscaler's broker gate
// (StrimziSafety), the pipeline controller's removal of the last broker but one (whether it is
// done, what to say of it, when to ask Strimzi again) and the tests that play Cruise Control's
// part all read the same conditions.

// rebalanceRunning are the states (condition types) of a KafkaRebalance under way.
var rebalanceRunning = map[string]bool{"New": true, "PendingProposal": true, "ProposalReady": true, "Rebalancing": true}

// RebalanceCondition is one condition Strimzi reports True on a KafkaRebalance: Strimzi writes
// the rebalance's state (New, PendingProposal, ProposalReady, Rebalancing, Ready, NotReady,
// Stopped, ...) as the one True condition (KafkaRebalanceAssemblyOperator, through
// StatusUtils), with a message for NotReady.
type RebalanceCondition struct {
	Type, Message string
	// Since is the condition's lastTransitionTime; zero when absent or not a time.
	Since time.Time
}

// Ended says whether the state ends the rebalance without moving the replicas (NotReady,
// Stopped). Strimzi leaves such a KafkaRebalance as it is until it is asked again (the
// strimzi.io/rebalance annotation) and retries a remove-brokers auto-rebalance at its next
// reconciliation, so a scale-down it was for is still pending.
func (c RebalanceCondition) Ended() bool { return c.Type == "NotReady" || c.Type == "Stopped" }

// Running says whether the state is one of a rebalance under way.
func (c RebalanceCondition) Running() bool { return rebalanceRunning[c.Type] }

// RebalanceConditions are rb's conditions whose status is True, in the order Strimzi lists them.
func RebalanceConditions(rb *unstructured.Unstructured) []RebalanceCondition {
	var out []RebalanceCondition
	conds, _, _ := unstructured.NestedSlice(rb.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		t, _ := m["type"].(string)
		if t == "" || m["status"] != "True" {
			continue
		}
		rc := RebalanceCondition{Type: t}
		rc.Message, _ = m["message"].(string)
		if at, ok := m["lastTransitionTime"].(string); ok {
			rc.Since, _ = time.Parse(time.RFC3339, at)
		}
		out = append(out, rc)
	}
	return out
}

// RebalanceReady says whether rb reports Ready: Cruise Control's moves are done.
func RebalanceReady(rb *unstructured.Unstructured) bool {
	for _, c := range RebalanceConditions(rb) {
		if c.Type == "Ready" {
			return true
		}
	}
	return false
}
