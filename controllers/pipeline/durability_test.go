package pipeline_test

import (
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/controllers/internal/envtestutil"
	"github.com/strata-dev/strata/internal/desired"
)

// TestKafkaDurability: the sample (replication factor 2) gets min.insync.replicas 2 on the
// brokers and the topic, and KafkaDurable=True saying that producers stop while a broker is
// down; asking for 1 in spec.kafka.minInSyncReplicas applies 1 and turns KafkaDurable False,
// saying what can be lost.
func TestKafkaDurability(t *testing.T) {
	o := envtestutil.StartOperator(t)
	ns, _ := o.CreateSamples(t)
	p := &v1alpha1.AnalyticsPipeline{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "sensors"}}

	minISR := func(want int64) func() error {
		return func() error {
			k := envtestutil.Child(t, o.C, desired.KafkaGVK, ns, desired.KafkaName(p))
			topic := envtestutil.Child(t, o.C, desired.KafkaTopicGVK, ns, desired.KafkaTopicName(p))
			if k == nil || topic == nil {
				return fmt.Errorf("no Kafka or KafkaTopic yet")
			}
			broker, _, _ := unstructured.NestedInt64(k.Object, "spec", "kafka", "config", "min.insync.replicas")
			onTopic, _, _ := unstructured.NestedInt64(topic.Object, "spec", "config", "min.insync.replicas")
			if broker != want || onTopic != want {
				return fmt.Errorf("min.insync.replicas %d on the brokers, %d on the topic; want %d", broker, onTopic, want)
			}
			return nil
		}
	}

	envtestutil.WaitPlanned(t, o.C, p, func() error {
		if err := envtestutil.Condition(p.Status.Conditions, v1alpha1.ConditionKafkaDurable, metav1.ConditionTrue, v1alpha1.ReasonReplicatedWrites); err != nil {
			return err
		}
		return minISR(2)()
	})
	if msg := envtestutil.Meta(p, v1alpha1.ConditionKafkaDurable).Message; !strings.Contains(msg, "refused") {
		t.Errorf("KafkaDurable with replication factor 2 does not say producers are refused while a broker is down: %q", msg)
	}

	envtestutil.UpdateSpec(t, o.C, p, func() { p.Spec.Kafka.MinInSyncReplicas = ptr.To[int32](1) })
	envtestutil.WaitPlanned(t, o.C, p, func() error {
		if err := envtestutil.Condition(p.Status.Conditions, v1alpha1.ConditionKafkaDurable, metav1.ConditionFalse, v1alpha1.ReasonSingleCopyWrites); err != nil {
			return err
		}
		return minISR(1)()
	})
	msg := envtestutil.Meta(p, v1alpha1.ConditionKafkaDurable).Message
	for _, want := range []string{"spec.kafka.minInSyncReplicas", "loses acknowledged writes"} {
		if !strings.Contains(msg, want) {
			t.Errorf("KafkaDurable message %q does not say %q", msg, want)
		}
	}
}
