package upstream

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/internal/controlplane"
	"github.com/strata-dev/strata/internal/desired"
	"github.com/strata-dev/strata/internal/lab"
	"github.com/strata-dev/strata/internal/plan"
	"github.com/strata-dev/strata/internal/testutil"
	"github.com/strata-dev/strata/internal/testutil/proc"
)

// strataFieldOwner is the operator's field manager (controllers/internal/setup.FieldOwner).
const strataFieldOwner = "strata"

// TestTopicOperatorReconcilesTheKafkaTopic hands the KafkaTopic Strata builds for the sample
// pipeline to Strimzi's real Topic Operator (1.2.0, built from its source by hack/strimzi.sh) on
// a real Kafka (the lab's brokers, KRaft, Kafka 4.3.1), and holds Kafka's topic, read with
// Kafka's own kafka-topics.sh, to what the plan asked for, through the changes Strata makes
// over a pipeline's life:
//
//   - created: the topic has the plan's partitions, replication factor and every configuration
//     the KafkaTopic sets (min.insync.replicas, retention.bytes, segment.bytes, retention.ms);
//   - more partitions (executors scaled up): Kafka has them;
//   - fewer partitions with another retention.bytes (a plan made afresh for a kept topic): the
//     Topic Operator refuses the decrease (Ready False, NotSupported) and Kafka keeps the
//     partitions, but the retention is applied all the same: why the plan never plans fewer
//     partitions than a topic has (plan.Observed.Partitions, and for a retained topic
//     controllers/pipeline/retained_claims.go);
//   - unmanaged (strimzi.io/managed "false", the Retain finalizer's step) and deleted: the topic
//     and its data stay in Kafka;
//   - a KafkaTopic for that topic again (the pipeline created again), with the partitions it
//     has: adopted, Ready;
//   - deleted while managed (a Delete pipeline): the topic goes from Kafka.
//
// It needs the Topic Operator's build (hack/strimzi.sh; its source comes from GitHub), Java 21
// or newer for it, and the lab's JVM build; without the build it is skipped saying so.
func TestTopicOperatorReconcilesTheKafkaTopic(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: a control plane, two Kafka brokers and Strimzi's Topic Operator")
	}
	build := TopicOperatorBuild(t)
	if build == "" {
		t.Skipf("no Topic Operator build: the KafkaTopic is only checked against Strimzi's CRD (hack/strimzi.sh builds "+
			"it from its source on GitHub into bin/strimzi-*/topic-operator, or set %s to a directory of its jars)", EnvTopicOperator)
	}
	ctx := context.Background()
	env, c, dir := entityOperatorEnv(t)
	p, topic := sampleTopic(ctx, t, c)
	// A ServiceAccount's token: fabric8's client, which the Topic Operator uses, does not read
	// the admin's client key (as for the cluster operator: startStrimzi).
	kubeconfig := serviceAccountKubeconfig(ctx, t, dir, env.Config, c, p.Namespace, "strimzi-topic-operator")
	kafka := lab.StartKafka(t, dir, desired.BrokerPodPrefix(p), 2, "rules: []\n")
	name := desired.TopicName(p)

	lockStrimziPort(t)
	to := run(t, dir, "strimzi-topic-operator", []string{
		"KUBECONFIG=" + kubeconfig,
		"STRIMZI_NAMESPACE=" + p.Namespace,
		"STRIMZI_RESOURCE_LABELS=" + desired.StrimziClusterLabel + "=" + desired.KafkaName(p),
		"STRIMZI_KAFKA_BOOTSTRAP_SERVERS=" + kafka.Bootstrap,
		"STRIMZI_FULL_RECONCILIATION_INTERVAL_MS=10000",
	}, filepath.Join(strimziJavaHome(), "bin", "java"), "-Xmx256m", "-XX:+UseSerialGC",
		"-cp", filepath.Join(build, "*"), "io.strimzi.operator.topic.Main")

	apply := func(t *testing.T, kt *unstructured.Unstructured) {
		t.Helper()
		if err := c.Patch(ctx, kt.DeepCopy(), client.Apply, client.FieldOwner(strataFieldOwner), client.ForceOwnership); err != nil {
			t.Fatalf("applying the KafkaTopic: %v", err)
		}
	}
	want := func(kt *unstructured.Unstructured) (int, int, map[string]string) {
		n, _, _ := unstructured.NestedInt64(kt.Object, "spec", "partitions")
		rf, _, _ := unstructured.NestedInt64(kt.Object, "spec", "replicas")
		cfg, _, _ := unstructured.NestedMap(kt.Object, "spec", "config")
		out := map[string]string{}
		for k, v := range cfg {
			out[k] = fmt.Sprint(v)
		}
		return int(n), int(rf), out
	}
	inKafka := func(t *testing.T, what string, check func(lab.Topic) error) lab.Topic {
		t.Helper()
		var got lab.Topic
		testutil.Eventually(t, upstreamWait, what, func() error {
			alive(t, to)
			got = kafka.DescribeTopic(ctx, t, name)
			return check(got)
		})
		return got
	}

	t.Run("created as planned", func(t *testing.T) {
		apply(t, topic)
		waitTopicCondition(ctx, t, c, to, topic, "Ready", "True", "")
		parts, rf, cfg := want(topic)
		got := inKafka(t, "the topic in Kafka", func(got lab.Topic) error {
			if !got.Exists {
				return fmt.Errorf("no topic %s", name)
			}
			return nil
		})
		if got.Partitions != parts || got.ReplicationFactor != rf {
			t.Errorf("Kafka: %d partitions × %d replicas, want the plan's %d × %d", got.Partitions, got.ReplicationFactor, parts, rf)
		}
		for k, v := range cfg {
			if got.Configs[k] != v {
				t.Errorf("Kafka: %s=%q, want the KafkaTopic's %q", k, got.Configs[k], v)
			}
		}
		t.Logf("Kafka's topic: %d partitions × %d replicas, %v", got.Partitions, got.ReplicationFactor, got.Configs)
	})

	if t.Failed() {
		return // each step starts from the state the one before left
	}
	grown := topic.DeepCopy()
	if t.Failed() {
		return // each step starts from the state the one before left
	}
	t.Run("more partitions", func(t *testing.T) {
		parts, _, _ := want(topic)
		setTopic(t, grown, int64(parts+9), nil)
		apply(t, grown)
		inKafka(t, "the added partitions", func(got lab.Topic) error {
			if got.Partitions != parts+9 {
				return fmt.Errorf("%d partitions, want %d", got.Partitions, parts+9)
			}
			return nil
		})
		waitTopicCondition(ctx, t, c, to, grown, "Ready", "True", "")
	})

	if t.Failed() {
		return // each step starts from the state the one before left
	}
	t.Run("fewer partitions: refused, and the config applied all the same", func(t *testing.T) {
		parts, _, cfg := want(grown)
		fresh := grown.DeepCopy()
		retention := cfg["retention.bytes"] + "0" // ten times: any other value
		setTopic(t, fresh, int64(parts-9), map[string]any{"retention.bytes": retention})
		apply(t, fresh)
		waitTopicCondition(ctx, t, c, to, fresh, "Ready", "False", "Decreasing partitions not supported")
		got := inKafka(t, "the new retention.bytes", func(got lab.Topic) error {
			if got.Configs["retention.bytes"] != retention {
				return fmt.Errorf("retention.bytes %q, want %q", got.Configs["retention.bytes"], retention)
			}
			return nil
		})
		if got.Partitions != parts {
			t.Errorf("Kafka: %d partitions, want the %d it had", got.Partitions, parts)
		}
		apply(t, grown) // as it was
		waitTopicCondition(ctx, t, c, to, grown, "Ready", "True", "")
	})

	if t.Failed() {
		return // each step starts from the state the one before left
	}
	t.Run("unmanaged and deleted: the topic stays", func(t *testing.T) {
		patch := `{"metadata":{"annotations":{"strimzi.io/managed":"false"}}}`
		if err := c.Patch(ctx, grown.DeepCopy(), client.RawPatch("application/merge-patch+json", []byte(patch))); err != nil {
			t.Fatal(err)
		}
		waitTopicCondition(ctx, t, c, to, grown, "Unmanaged", "True", "")
		if err := c.Delete(ctx, grown.DeepCopy()); err != nil {
			t.Fatal(err)
		}
		testutil.Eventually(t, upstreamWait, "the KafkaTopic gone (its finalizer removed)", func() error {
			alive(t, to)
			err := c.Get(ctx, client.ObjectKeyFromObject(grown), grown.DeepCopy())
			if err == nil {
				return fmt.Errorf("still there")
			}
			return client.IgnoreNotFound(err)
		})
		parts, _, _ := want(grown)
		if got := kafka.DescribeTopic(ctx, t, name); !got.Exists || got.Partitions != parts {
			t.Errorf("Kafka's topic after the unmanaged KafkaTopic went: %+v, want it kept with %d partitions", got, parts)
		}
	})

	if t.Failed() {
		return // each step starts from the state the one before left
	}
	t.Run("created again: adopted", func(t *testing.T) {
		again := grown.DeepCopy()
		again.SetResourceVersion("")
		again.SetUID("")
		apply(t, again)
		waitTopicCondition(ctx, t, c, to, again, "Ready", "True", "")
	})

	if t.Failed() {
		return // each step starts from the state the one before left
	}
	t.Run("deleted while managed: the topic goes", func(t *testing.T) {
		if err := c.Delete(ctx, grown.DeepCopy()); err != nil {
			t.Fatal(err)
		}
		inKafka(t, "the topic deleted from Kafka", func(got lab.Topic) error {
			if got.Exists {
				return fmt.Errorf("still there: %+v", got)
			}
			return nil
		})
	})
}

// sampleTopic creates config/samples' pipeline (for the API server's defaults) and returns it
// with the KafkaTopic Strata builds for its plan, as the operator applies it but for the owner
// reference (no controller runs for it here).
func sampleTopic(ctx context.Context, t *testing.T, c client.Client) (*v1alpha1.AnalyticsPipeline, *unstructured.Unstructured) {
	t.Helper()
	in := samplePlan(ctx, t, c, "topics")
	kt := desired.Topic(in)
	kt.SetOwnerReferences(nil)
	return in.Pipeline, kt
}

// samplePlan creates config/samples' tiers and pipeline, the pipeline in namespace ns (the API
// server defaults it), and returns the inputs Strata builds its children from.
func samplePlan(ctx context.Context, t *testing.T, c client.Client, ns string) desired.Inputs {
	t.Helper()
	objs, p := Samples(t)
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	var tiers []v1alpha1.StorageTier
	for _, o := range objs {
		if err := c.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
		tiers = append(tiers, *o.(*v1alpha1.StorageTier))
	}
	p.Namespace = ns
	if err := c.Create(ctx, p); err != nil {
		t.Fatal(err)
	}
	pl, err := plan.Fresh(p, tiers)
	if err != nil {
		t.Fatal(err)
	}
	return desired.Inputs{Pipeline: p, Plan: pl, Tiers: tiers}
}

// setTopic sets a KafkaTopic's partitions and some of its configuration.
func setTopic(t *testing.T, kt *unstructured.Unstructured, partitions int64, config map[string]any) {
	t.Helper()
	if err := unstructured.SetNestedField(kt.Object, partitions, "spec", "partitions"); err != nil {
		t.Fatal(err)
	}
	for k, v := range config {
		if err := unstructured.SetNestedField(kt.Object, v, "spec", "config", k); err != nil {
			t.Fatal(err)
		}
	}
}

// waitTopicCondition waits until the Topic Operator reports condition typ with status on the
// KafkaTopic's current generation, its message containing message.
func waitTopicCondition(ctx context.Context, t *testing.T, c client.Client, to *proc.Process, kt *unstructured.Unstructured, typ, status, message string) {
	t.Helper()
	testutil.Eventually(t, upstreamWait, fmt.Sprintf("KafkaTopic %s=%s %q", typ, status, message), func() error {
		alive(t, to)
		got := kt.DeepCopy()
		if err := c.Get(ctx, client.ObjectKeyFromObject(kt), got); err != nil {
			return err
		}
		observed, _, _ := unstructured.NestedInt64(got.Object, "status", "observedGeneration")
		conds, _, _ := unstructured.NestedSlice(got.Object, "status", "conditions")
		for _, x := range conds {
			cond, _ := x.(map[string]any)
			if cond["type"] == typ && cond["status"] == status && strings.Contains(fmt.Sprint(cond["message"]), message) &&
				observed == got.GetGeneration() {
				return nil
			}
		}
		return fmt.Errorf("generation %d, observed %d, conditions %v", got.GetGeneration(), observed, conds)
	})
}

// entityOperatorEnv starts a control plane for a test of one of Strimzi's entity operators and
// returns it, a client and the directory for the test's logs (kept under $STRATA_UPSTREAM_LOGS
// when set, as the harness keeps its components': Start).
func entityOperatorEnv(t *testing.T) (*controlplane.Env, client.Client, string) {
	t.Helper()
	env, c := testutil.ControlPlane(t)
	dir := t.TempDir()
	if keep := os.Getenv(EnvLogs); keep != "" {
		dir = filepath.Join(keep, t.Name())
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return env, c, dir
}
