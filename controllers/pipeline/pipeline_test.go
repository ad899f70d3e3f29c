package pipeline_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/controllers/internal/envtestutil"
	"github.com/strata-dev/strata/internal/desired"
	"github.com/strata-dev/strata/internal/plan"
	"github.com/strata-dev/strata/internal/testutil"
)

// TestPipelineLifecycle: the sample pipeline gets its plan and every child with owner references
// and labels; a larger workload scales brokers, partitions, executors and data nodes up; a
// smaller one scales them down, except partitions, which Kafka cannot remove; a resync with
// nothing changed writes nothing; deleting the pipeline leaves it to the garbage collector.
func TestPipelineLifecycle(t *testing.T) {
	o := envtestutil.StartOperator(t)
	ns, _ := o.CreateSamples(t)
	ctx := context.Background()
	p := &v1alpha1.AnalyticsPipeline{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "sensors"}}

	envtestutil.WaitPlanned(t, o.C, p, func() error {
		return envtestutil.Condition(p.Status.Conditions, v1alpha1.ConditionPlanValid, metav1.ConditionTrue, v1alpha1.ReasonPlanned)
	})
	if got := fmt.Sprintf("brokers=%d partitions=%d executors=%d dataNodes=%d", p.Status.Plan.Brokers,
		p.Status.Plan.Partitions, p.Status.Plan.Executors, p.Status.Plan.ElasticsearchDataNodes); got != "brokers=3 partitions=21 executors=4 dataNodes=4" {
		t.Errorf("sample plan: %s, want docs/api.md's brokers=3 partitions=21 executors=4 dataNodes=4", got)
	}

	in := desired.Inputs{Pipeline: p, Plan: *p.Status.Plan}
	for _, want := range desired.All(in) {
		got := envtestutil.Child(t, o.C, want.GroupVersionKind(), ns, want.GetName())
		if got == nil {
			t.Errorf("%s %s was not created", want.GetKind(), want.GetName())
			continue
		}
		ref := metav1.GetControllerOf(got)
		if ref == nil || ref.UID != p.UID || ref.Kind != "AnalyticsPipeline" || ref.BlockOwnerDeletion == nil || !*ref.BlockOwnerDeletion {
			t.Errorf("%s %s: controller reference %+v, want the pipeline (uid %s) blocking deletion", got.GetKind(), got.GetName(), ref, p.UID)
		}
		if got.GetLabels()[desired.LabelInstance] != "sensors" || got.GetLabels()[desired.LabelManagedBy] != "strata" {
			t.Errorf("%s %s: labels %v", got.GetKind(), got.GetName(), got.GetLabels())
		}
		if mf := got.GetManagedFields(); len(mf) == 0 || mf[0].Manager != "strata" || mf[0].Operation != metav1.ManagedFieldsOperationApply {
			t.Errorf("%s %s: not server-side applied by field owner strata: %+v", got.GetKind(), got.GetName(), mf)
		}
	}
	brokers := func() int64 {
		return envtestutil.NestedInt(envtestutil.Child(t, o.C, desired.KafkaNodePoolGVK, ns, desired.BrokerPoolName(p)), "spec", "replicas")
	}
	if brokers() != 3 {
		t.Errorf("broker pool replicas %d, want 3", brokers())
	}

	events := func() []eventsv1.Event {
		list := &eventsv1.EventList{}
		if err := o.C.List(ctx, list, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
		var out []eventsv1.Event
		for _, e := range list.Items {
			if e.Regarding.Name == "sensors" && e.Regarding.Kind == "AnalyticsPipeline" {
				out = append(out, e)
			}
		}
		return out
	}
	envtestutil.WaitFor(t, o.C, p, func() error {
		for _, e := range events() {
			if e.Reason == v1alpha1.ReasonPlanned && e.Action == v1alpha1.ConditionPlanValid && e.Type == "Normal" {
				return nil
			}
		}
		return fmt.Errorf("no PlanValid/Planned event recorded")
	})

	t.Run("nothing changed, nothing written", func(t *testing.T) {
		o.Settle(t, p)
		eventsBefore := len(events())
		// Proven on the reconcile that read the change, not by waiting for writes that may come late.
		if r := o.Touch(t, p); r.Writes != 0 || r.Events != 0 || r.Err != nil {
			t.Errorf("a reconcile with unchanged inputs made %d writes and recorded %d events (err %v), want none: events are for transitions; %v",
				r.Writes, r.Events, r.Err, envtestutil.WritesByKind(o.ByKind))
		}
		if n := len(events()) - eventsBefore; n != 0 {
			t.Errorf("%d events in the API after a reconcile with unchanged inputs, want 0", n)
		}
	})

	t.Run("restart: a full resync writes nothing", func(t *testing.T) {
		o.StopManager()
		o.StartManager(t)
		// The new manager's first reconciles read the caches it synced at start: all there is.
		r := o.History.Finished(t, "analyticspipeline", client.ObjectKeyFromObject(p), envtestutil.Saw("AnalyticsPipeline", p, p.ResourceVersion))
		if r.Writes != 0 || r.Err != nil {
			t.Errorf("a restarted operator's first reconcile made %d writes (err %v) with nothing changed, want 0: %v", r.Writes, r.Err, envtestutil.WritesByKind(o.ByKind))
		}
	})

	t.Run("executors in place", func(t *testing.T) {
		// More executors and nothing else (the floor raised, as the autoscaler raises the count):
		// the target changes and the SparkApplication does not, so the Spark operator has
		// nothing to submit again.
		app := envtestutil.Child(t, o.C, desired.SparkApplicationGVK, ns, desired.SparkApplicationName(p))
		patch := `{"spec":{"spark":{"executors":{"min":6}}}}`
		if err := o.C.Patch(context.Background(), p, client.RawPatch("application/merge-patch+json", []byte(patch))); err != nil {
			t.Fatal(err)
		}
		envtestutil.WaitPlanned(t, o.C, p, func() error {
			if p.Status.Plan.Executors != 6 {
				return fmt.Errorf("%d executors planned", p.Status.Plan.Executors)
			}
			return nil
		})
		target := envtestutil.Child(t, o.C, desired.ConfigMapGVK, ns, desired.ExecutorsConfigMapName(p))
		if got, _, _ := unstructured.NestedString(target.Object, "data", desired.ExecutorsKey); got != "6" {
			t.Errorf("executor target %q, want 6", got)
		}
		after := envtestutil.Child(t, o.C, desired.SparkApplicationGVK, ns, desired.SparkApplicationName(p))
		if after.GetGeneration() != app.GetGeneration() || envtestutil.NestedInt(after, "spec", "executor", "instances") != 4 {
			t.Errorf("SparkApplication generation %d -> %d, executors %d: want it unchanged, with the 4 it was submitted with",
				app.GetGeneration(), after.GetGeneration(), envtestutil.NestedInt(after, "spec", "executor", "instances"))
		}
	})

	t.Run("scale up", func(t *testing.T) {
		setIngest(t, o.C, p, 30000)
		envtestutil.WaitPlanned(t, o.C, p, func() error {
			if brokers() <= 3 {
				return fmt.Errorf("broker pool still has %d replicas", brokers())
			}
			return nil
		})
		topic := envtestutil.Child(t, o.C, desired.KafkaTopicGVK, ns, desired.KafkaTopicName(p))
		app := envtestutil.Child(t, o.C, desired.SparkApplicationGVK, ns, desired.SparkApplicationName(p))
		es := envtestutil.Child(t, o.C, desired.ElasticsearchGVK, ns, desired.ElasticsearchName(p))
		if got := envtestutil.NestedInt(topic, "spec", "partitions"); got != int64(p.Status.Plan.Partitions) || got <= 20 {
			t.Errorf("topic partitions %d, plan %d: want more than 20", got, p.Status.Plan.Partitions)
		}
		// The micro-batch follows the workload, so the SparkApplication changes (and the Spark
		// operator submits the job again) anyway: with the plan's executors, as the target.
		target := envtestutil.Child(t, o.C, desired.ConfigMapGVK, ns, desired.ExecutorsConfigMapName(p))
		if got, _, _ := unstructured.NestedString(target.Object, "data", desired.ExecutorsKey); got != fmt.Sprint(p.Status.Plan.Executors) || p.Status.Plan.Executors <= 6 {
			t.Errorf("executor target %s, plan %d: want more than 6", got, p.Status.Plan.Executors)
		}
		if got := envtestutil.NestedInt(app, "spec", "executor", "instances"); got != int64(p.Status.Plan.Executors) {
			t.Errorf("SparkApplication executors %d, plan %d: a SparkApplication submitted again starts with the plan's count", got, p.Status.Plan.Executors)
		}
		nodeSets, _, _ := unstructured.NestedSlice(es.Object, "spec", "nodeSets")
		if data := nodeSets[len(nodeSets)-1].(map[string]any); data["count"] != int64(p.Status.Plan.ElasticsearchDataNodes) || p.Status.Plan.ElasticsearchDataNodes <= 4 {
			t.Errorf("data nodeSet %v, plan %d: want more than 4", data["count"], p.Status.Plan.ElasticsearchDataNodes)
		}
	})

	t.Run("scale down keeps partitions", func(t *testing.T) {
		grown := envtestutil.NestedInt(envtestutil.Child(t, o.C, desired.KafkaTopicGVK, ns, desired.KafkaTopicName(p)), "spec", "partitions")
		setIngest(t, o.C, p, 10000)
		envtestutil.WaitPlanned(t, o.C, p, func() error {
			if brokers() != 3 {
				return fmt.Errorf("broker pool has %d replicas, want 3 again", brokers())
			}
			return nil
		})
		if got := envtestutil.NestedInt(envtestutil.Child(t, o.C, desired.KafkaTopicGVK, ns, desired.KafkaTopicName(p)), "spec", "partitions"); got != grown {
			t.Errorf("partitions went from %d to %d: Kafka cannot remove partitions", grown, got)
		}
		if c := envtestutil.Meta(p, v1alpha1.ConditionPlanValid); c == nil || !strings.Contains(c.Message, "Kafka cannot remove partitions") {
			t.Errorf("PlanValid should say the partitions were kept: %+v", c)
		}
		// The plan is made for the partitions the topic has: retention.bytes, which Kafka
		// applies per partition, is what a spec fixing that many would plan, not what the
		// fewer partitions of a new topic would get (each broker would keep more than its
		// volume holds).
		var tiers v1alpha1.StorageTierList
		if err := o.C.List(ctx, &tiers); err != nil {
			t.Fatal(err)
		}
		fixed := p.DeepCopy()
		fixed.Spec.Kafka.Topic.Partitions = int32(grown)
		want, err := plan.Fresh(fixed, tiers.Items)
		if err != nil {
			t.Fatal(err)
		}
		// The broker pool reaches 3 in the wave before the topic's (apply_waves.go), and the
		// generation was observed before the last step: wait for the topic's apply too.
		envtestutil.WaitPlanned(t, o.C, p, func() error {
			topic := envtestutil.Child(t, o.C, desired.KafkaTopicGVK, ns, desired.KafkaTopicName(p))
			got, _, _ := unstructured.NestedFieldNoCopy(topic.Object, "spec", "config", "retention.bytes")
			if p.Status.Plan.Partitions != int32(grown) || fmt.Sprint(got) != fmt.Sprint(want.Retention.KafkaRetentionBytes) {
				return fmt.Errorf("plan for %d partitions, topic retention.bytes %v; want %d partitions and %d, as planned for them",
					p.Status.Plan.Partitions, got, grown, want.Retention.KafkaRetentionBytes)
			}
			return nil
		})
	})

	t.Run("a topic gone from under the pipeline comes back with its partitions", func(t *testing.T) {
		// The last plan in status holds the partitions the topic had: a KafkaTopic the operator
		// does not see (deleted, or missing from a relisting cache) must not be planned anew
		// with fewer, which Strimzi would refuse for the topic Kafka still has (keptPartitions).
		topic := envtestutil.Child(t, o.C, desired.KafkaTopicGVK, ns, desired.KafkaTopicName(p))
		had := envtestutil.NestedInt(topic, "spec", "partitions")
		uid := topic.GetUID()
		if err := o.C.Delete(ctx, topic); err != nil {
			t.Fatal(err)
		}
		testutil.Eventually(t, time.Minute, "the KafkaTopic made again", func() error {
			again := &unstructured.Unstructured{}
			again.SetGroupVersionKind(desired.KafkaTopicGVK)
			if err := o.C.Get(ctx, client.ObjectKey{Namespace: ns, Name: desired.KafkaTopicName(p)}, again); err != nil {
				return err
			}
			if again.GetUID() == uid {
				return fmt.Errorf("still the deleted one")
			}
			if got := envtestutil.NestedInt(again, "spec", "partitions"); got != had {
				return fmt.Errorf("the new KafkaTopic has %d partitions, the topic had %d", got, had)
			}
			return nil
		})
	})

	t.Run("deletion", func(t *testing.T) {
		if err := o.C.Delete(ctx, p); err != nil {
			t.Fatal(err)
		}
		envtestutil.WaitGone(t, o.C, p)
		// envtest runs no garbage collector: the children stay, owned by a pipeline that is gone,
		// and the reconcile that finds the pipeline gone must not recreate or touch them.
		if r := o.History.Finished(t, "analyticspipeline", client.ObjectKeyFromObject(p), envtestutil.Saw("AnalyticsPipeline", p, "")); r.Writes != 0 || r.Err != nil {
			t.Errorf("the reconcile of the deleted pipeline made %d writes (err %v)", r.Writes, r.Err)
		}
		pool := envtestutil.Child(t, o.C, desired.KafkaNodePoolGVK, ns, desired.BrokerPoolName(p))
		if del, _, _ := unstructured.NestedBool(pool.Object, "spec", "storage", "volumes", "0", "deleteClaim"); del {
			t.Error("broker volumes would be deleted with the pipeline; volumeReclaimPolicy Retain keeps them")
		}
	})
}

func setIngest(t *testing.T, c client.Client, p *v1alpha1.AnalyticsPipeline, mps int64) {
	t.Helper()
	patch := fmt.Sprintf(`{"spec":{"workload":{"messagesPerSecond":%d}}}`, mps)
	if err := c.Patch(context.Background(), p, client.RawPatch("application/merge-patch+json", []byte(patch))); err != nil {
		t.Fatal(err)
	}
}

// TestInvalidPlanNotRetried: a spec admission accepts but the planner cannot plan sets
// PlanValid=False naming the field, and is not retried until something changes.
func TestInvalidPlanNotRetried(t *testing.T) {
	o := envtestutil.StartOperator(t)
	ns, _ := o.CreateSamples(t)
	p := &v1alpha1.AnalyticsPipeline{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "sensors"}}
	envtestutil.WaitPlanned(t, o.C, p, func() error { return nil })
	planned := p.Status.Plan.DeepCopy()

	// Valid for the API (the CRD's image pattern and length), refused by the planner: a
	// repository name over 255 characters, which distribution/reference does not parse.
	envtestutil.UpdateSpec(t, o.C, p, func() { p.Spec.Spark.Image = "registry.example/" + strings.Repeat("a", 300) + ":1.0" })
	invalid := p.ResourceVersion
	envtestutil.WaitFor(t, o.C, p, func() error {
		if p.Status.ObservedGeneration != p.Generation {
			return fmt.Errorf("not observed yet")
		}
		return envtestutil.Condition(p.Status.Conditions, v1alpha1.ConditionPlanValid, metav1.ConditionFalse, v1alpha1.ReasonInvalidSpec)
	})
	if c := envtestutil.Meta(p, v1alpha1.ConditionPlanValid); !strings.Contains(c.Message, "spec.spark.image") {
		t.Errorf("PlanValid message should name the field: %q", c.Message)
	}
	if p.Status.Plan == nil || p.Status.Plan.Brokers != planned.Brokers {
		t.Errorf("the last good plan should stay in status, got %+v", p.Status.Plan)
	}
	// controller-runtime requeues a reconcile only on an error or a requeue in its result: the
	// reconcile that found the spec invalid must ask for neither.
	r := o.History.Finished(t, "analyticspipeline", client.ObjectKeyFromObject(p), envtestutil.Saw("AnalyticsPipeline", p, invalid))
	if !r.Result.IsZero() || r.Err != nil {
		t.Errorf("the reconcile of an invalid spec returned %+v, %v: it would be retried with nothing changed", r.Result, r.Err)
	}
}
