package desired

import (
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// strimziRefusal is the check Strimzi makes of a Kafka with Cruise Control before anything else
// (strimzi-kafka-operator 1.2.0, cluster-operator/src/main/java/io/strimzi/operator/cluster/
// model/cruisecontrol/CruiseControlMetricsReporter.java, validateCruiseControl, called by
// KafkaCluster.fromCrd): the brokers counted are those the node pools with the broker role ask
// for (spec.replicas), not those running. It returns Strimzi's message, or "" when it accepts.
func strimziRefusal(objs []*unstructured.Unstructured) string {
	var kafka *unstructured.Unstructured
	brokers := int64(0)
	for _, o := range objs {
		switch o.GetKind() {
		case "Kafka":
			kafka = o
		case "KafkaNodePool":
			roles, _, _ := unstructured.NestedStringSlice(o.Object, "spec", "roles")
			for _, r := range roles {
				if r == "broker" {
					n, _, _ := unstructured.NestedInt64(o.Object, "spec", "replicas")
					brokers += n
				}
			}
		}
	}
	if kafka == nil {
		return ""
	}
	if _, cc, _ := unstructured.NestedMap(kafka.Object, "spec", "cruiseControl"); cc && brokers < 2 {
		return fmt.Sprintf("Kafka %s/%s has invalid configuration. Cruise Control cannot be deployed with a Kafka "+
			"cluster which has only one broker. It requires at least two Kafka brokers.", kafka.GetNamespace(), kafka.GetName())
	}
	return ""
}

// TestStrimziAcceptsEveryCase: no built set of objects is one Strimzi refuses. And the check
// fails on what Strata built before (Cruise Control kept while the pool went to one broker).
func TestStrimziAcceptsEveryCase(t *testing.T) {
	for _, tc := range testCases(t) {
		if msg := strimziRefusal(All(tc.in)); msg != "" {
			t.Errorf("%s: Strimzi refuses it: %s", tc.name, msg)
		}
	}
	in := lastBrokerLeaving(t)
	objs := All(in)
	for _, o := range objs {
		if o.GetKind() == "Kafka" {
			// The Kafka of two brokers, with the pool at one: what keeping Cruise Control while the
			// last broker but one left applied.
			two := in
			two.Plan.Brokers = 2
			o.Object["spec"].(map[string]any)["cruiseControl"] = Kafka(two).Object["spec"].(map[string]any)["cruiseControl"]
		}
	}
	if msg := strimziRefusal(objs); msg == "" {
		t.Error("Cruise Control with a pool of one broker passed the check: it proves nothing")
	}
}
