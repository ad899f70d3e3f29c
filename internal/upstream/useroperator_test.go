package upstream

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/strata-dev/strata/internal/desired"
	"github.com/strata-dev/strata/internal/lab"
	"github.com/strata-dev/strata/internal/testutil"
)

// TestUserOperatorGivesTheJobItsCredentials hands the KafkaUser Strata builds for the sample's
// job to Strimzi's real User Operator (1.2.0, built from its source by hack/strimzi.sh) on real
// Kafka brokers with a SCRAM-SHA-512 listener and Kafka's StandardAuthorizer (the lab's, as the
// Kafka Strata builds has them), and checks the job's side of it:
//
//   - the User Operator makes the SCRAM credential and the ACLs, and writes the Secret the
//     SparkApplication Strata builds names: every secretKeyRef of the job's JAAS variable
//     (KAFKA_SASL_JAAS_CONFIG, driver and executors) names that Secret and a key it has;
//   - that key's JAAS line authenticates a consumer on the SCRAM listener, as the job does
//     (SASL_PLAINTEXT, SCRAM-SHA-512), which reads the pipeline's topic and commits to the
//     pipeline's consumer group;
//   - the ACLs hold it to that: another topic, or another consumer group, is refused.
//
// It needs the User Operator's build (hack/strimzi.sh; its source comes from GitHub), Java 21 or
// newer for it, and the lab's JVM build; without the build it is skipped saying so.
func TestUserOperatorGivesTheJobItsCredentials(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: a control plane, two Kafka brokers and Strimzi's User Operator")
	}
	build := UserOperatorBuild(t)
	if build == "" {
		t.Skipf("no User Operator build: the KafkaUser is only checked against Strimzi's CRD and the Secret it makes is "+
			"taken on trust (hack/strimzi.sh builds it from its source on GitHub into bin/strimzi-*/user-operator, or set %s "+
			"to a directory of its jars)", EnvUserOperator)
	}
	ctx := context.Background()
	env, c, dir := entityOperatorEnv(t)
	in := samplePlan(ctx, t, c, "users")
	p := in.Pipeline
	kafka := lab.StartKafkaSCRAM(t, dir, desired.BrokerPodPrefix(p), 2, "rules: []\n")
	topic := desired.TopicName(p)
	kafka.CreateTopic(ctx, t, topic, 3, 2)
	kafka.CreateTopic(ctx, t, "other", 1, 2)
	records := []string{"r0", "r1", "r2", "r3", "r4"}
	kafka.ProduceLines(ctx, t, topic, records)
	kafka.ProduceLines(ctx, t, "other", records[:1])

	kubeconfig := serviceAccountKubeconfig(ctx, t, dir, env.Config, c, p.Namespace, "strimzi-user-operator")
	lockPort(t, 8081, "Strimzi's User Operator")
	uo := run(t, dir, "strimzi-user-operator", []string{
		"KUBECONFIG=" + kubeconfig,
		"STRIMZI_NAMESPACE=" + p.Namespace,
		"STRIMZI_LABELS=" + desired.StrimziClusterLabel + "=" + desired.KafkaName(p),
		// The PLAINTEXT listener, whose clients are super users here, as the entity operator's
		// certificate makes it one in a cluster.
		"STRIMZI_KAFKA_BOOTSTRAP_SERVERS=" + kafka.Bootstrap,
		// The clients CA Strimzi names for the cluster; only TLS users need it.
		"STRIMZI_CA_CERT_NAME=" + desired.KafkaName(p) + "-clients-ca-cert",
		"STRIMZI_CA_KEY_NAME=" + desired.KafkaName(p) + "-clients-ca",
		"STRIMZI_FULL_RECONCILIATION_INTERVAL_MS=10000",
	}, filepath.Join(strimziJavaHome(), "bin", "java"), "-Xmx256m", "-XX:+UseSerialGC",
		"-cp", filepath.Join(build, "*"), "io.strimzi.operator.user.Main")

	user := desired.KafkaUser(in)
	user.SetOwnerReferences(nil)
	if err := c.Patch(ctx, user.DeepCopy(), client.Apply, client.FieldOwner(strataFieldOwner), client.ForceOwnership); err != nil {
		t.Fatalf("applying the KafkaUser: %v", err)
	}
	waitTopicCondition(ctx, t, c, uo, user, "Ready", "True", "")

	secret := &corev1.Secret{}
	testutil.Eventually(t, upstreamWait, "the User Operator's Secret", func() error {
		alive(t, uo)
		return c.Get(ctx, client.ObjectKey{Namespace: p.Namespace, Name: desired.KafkaUserName(p)}, secret)
	})
	refs := secretKeyRefs(desired.SparkApplication(in).Object, desired.KafkaSaslJaasEnv)
	if len(refs) < 2 {
		t.Fatalf("the SparkApplication gives %s from %d secretKeyRefs, want the driver's and the executors'", desired.KafkaSaslJaasEnv, len(refs))
	}
	var jaas string
	for _, r := range refs {
		v, ok := secret.Data[r.key]
		if r.name != secret.Name || !ok {
			t.Fatalf("the SparkApplication takes %s from Secret %s key %q; the User Operator wrote Secret %s with keys %v",
				desired.KafkaSaslJaasEnv, r.name, r.key, secret.Name, keys(secret.Data))
		}
		jaas = string(v)
	}
	if !strings.Contains(jaas, "ScramLoginModule") {
		t.Fatalf("%s: %q, want a SCRAM login module's JAAS line", desired.KafkaUserJaasKey, jaas)
	}

	t.Run("the job's credentials read its topic in its group", func(t *testing.T) {
		var got []string
		testutil.Eventually(t, upstreamWait, "the topic read as the job's user", func() error {
			// The User Operator sets the credential and the ACLs before it writes the Secret;
			// the brokers apply them from the metadata log within moments.
			var err error
			got, err = kafka.ConsumeAs(ctx, t, jaas, topic, desired.ConsumerGroup(p), len(records), 20000)
			return err
		})
		slices.Sort(got)
		if !slices.Equal(got, records) {
			t.Errorf("read %v, want %v", got, records)
		}
	})
	t.Run("another topic is refused", func(t *testing.T) {
		got, err := kafka.ConsumeAs(ctx, t, jaas, "other", desired.ConsumerGroup(p), 1, 10000)
		if err == nil || len(got) > 0 || !strings.Contains(err.Error(), "TopicAuthorization") {
			t.Errorf("read %v from another topic (%v), want a TopicAuthorizationException", got, err)
		}
	})
	t.Run("another consumer group is refused", func(t *testing.T) {
		got, err := kafka.ConsumeAs(ctx, t, jaas, topic, "not-"+desired.ConsumerGroup(p), 1, 10000)
		if err == nil || len(got) > 0 || !strings.Contains(err.Error(), "GroupAuthorization") {
			t.Errorf("read %v in another group (%v), want a GroupAuthorizationException", got, err)
		}
	})
}

// keyRef is a secretKeyRef.
type keyRef struct{ name, key string }

// secretKeyRefs finds every environment variable named env anywhere in obj and returns the
// Secret and key each takes its value from.
func secretKeyRefs(obj any, env string) []keyRef {
	var out []keyRef
	switch v := obj.(type) {
	case map[string]any:
		if v["name"] == env {
			ref, _, _ := unstructured.NestedStringMap(v, "valueFrom", "secretKeyRef")
			out = append(out, keyRef{name: ref["name"], key: ref["key"]})
		}
		for _, x := range v {
			out = append(out, secretKeyRefs(x, env)...)
		}
	case []any:
		for _, x := range v {
			out = append(out, secretKeyRefs(x, env)...)
		}
	}
	return out
}

func keys(m map[string][]byte) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
