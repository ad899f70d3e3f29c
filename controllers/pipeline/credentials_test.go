package pipeline_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/controllers/internal/envtestutil"
	"github.com/strata-dev/strata/internal/desired"
)

// esUserSecret reads the job's Elasticsearch user Secret; nil when there is none.
func esUserSecret(t *testing.T, o *envtestutil.Operator, p *v1alpha1.AnalyticsPipeline) *corev1.Secret {
	t.Helper()
	s := &corev1.Secret{}
	key := client.ObjectKey{Namespace: p.Namespace, Name: desired.ElasticsearchUserSecretName(p)}
	if err := o.C.Get(context.Background(), key, s); err != nil {
		return nil
	}
	return s
}

// TestJobCredentials: the sample pipeline's job gets its own identities, from Secrets only —
// a KafkaUser whose ACLs name exactly the topic and the consumer group the job is configured
// with, and an Elasticsearch user (a password generated once into a Secret the pipeline owns)
// with a role on the pipeline's indices — and nothing of ECK's elastic superuser. Reconciles
// with nothing changed write nothing (the password is never generated again); a password put
// into the Secret stays; a deleted Secret is made again with a new one.
func TestJobCredentials(t *testing.T) {
	o := envtestutil.StartOperator(t)
	ns, _ := o.CreateSamples(t)
	p := &v1alpha1.AnalyticsPipeline{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "sensors"}}
	envtestutil.WaitPlanned(t, o.C, p, func() error {
		if esUserSecret(t, o, p) == nil {
			return fmt.Errorf("no Secret %s yet", desired.ElasticsearchUserSecretName(p))
		}
		return nil
	})

	// Kafka: SCRAM on the job's listener, simple authorization, the User Operator.
	kafka := envtestutil.Child(t, o.C, desired.KafkaGVK, ns, desired.KafkaName(p))
	listeners, _, _ := unstructured.NestedSlice(kafka.Object, "spec", "kafka", "listeners")
	if auth, _, _ := unstructured.NestedString(listeners[0].(map[string]any), "authentication", "type"); auth != "scram-sha-512" {
		t.Errorf("listener %v: authentication %q, want scram-sha-512", listeners[0], auth)
	}
	if authz, _, _ := unstructured.NestedString(kafka.Object, "spec", "kafka", "authorization", "type"); authz != "simple" {
		t.Errorf("Kafka authorization %q, want simple", authz)
	}
	if _, ok, _ := unstructured.NestedMap(kafka.Object, "spec", "entityOperator", "userOperator"); !ok {
		t.Error("Kafka has no User Operator")
	}

	// The KafkaUser's ACLs are the job's topic and group, as the SparkApplication configures it.
	app := envtestutil.Child(t, o.C, desired.SparkApplicationGVK, ns, desired.SparkApplicationName(p))
	conf, _, _ := unstructured.NestedStringMap(app.Object, "spec", "sparkConf")
	user := envtestutil.Child(t, o.C, desired.KafkaUserGVK, ns, desired.KafkaUserName(p))
	if user == nil {
		t.Fatalf("no KafkaUser %s", desired.KafkaUserName(p))
	}
	if user.GetLabels()[desired.StrimziClusterLabel] != desired.KafkaName(p) {
		t.Errorf("KafkaUser labels %v: not joined to its cluster", user.GetLabels())
	}
	acls, _, _ := unstructured.NestedSlice(user.Object, "spec", "authorization", "acls")
	var got []string
	for _, a := range acls {
		m := a.(map[string]any)
		r := m["resource"].(map[string]any)
		got = append(got, r["type"].(string)+":"+r["name"].(string)+":"+r["patternType"].(string))
	}
	want := []string{"topic:" + conf["spark.strata.kafka.topic"] + ":literal", "group:" + conf[desired.PipelineConf] + ":literal"}
	if !slices.Equal(got, want) {
		t.Errorf("KafkaUser ACLs on %v, want exactly %v", got, want)
	}

	// Credentials only from Secrets: the containers' env names the KafkaUser's and the
	// Elasticsearch user's Secrets; no setting carries a user of ECK's or a secret reference.
	for k, v := range conf {
		if strings.Contains(k, "secretKeyRef") || v == "elastic" || strings.Contains(v, "es-elastic-user") {
			t.Errorf("sparkConf %s=%s: credentials must come from the job's own Secrets", k, v)
		}
	}
	for _, role := range []string{"driver", "executor"} {
		containers, _, _ := unstructured.NestedSlice(app.Object, "spec", role, "template", "spec", "containers")
		env := map[string]string{}
		for _, e := range containers[0].(map[string]any)["env"].([]any) {
			m := e.(map[string]any)
			ref := m["valueFrom"].(map[string]any)["secretKeyRef"].(map[string]any)
			env[m["name"].(string)] = ref["name"].(string) + "/" + ref["key"].(string)
		}
		if env[desired.KafkaSaslJaasEnv] != desired.KafkaUserName(p)+"/sasl.jaas.config" ||
			env["ES_USER"] != desired.ElasticsearchUserSecretName(p)+"/username" ||
			env["ES_PASSWORD"] != desired.ElasticsearchUserSecretName(p)+"/password" {
			t.Errorf("%s env from Secrets %v", role, env)
		}
	}

	// Elasticsearch: ECK gets the user and the role through spec.auth.
	es := envtestutil.Child(t, o.C, desired.ElasticsearchGVK, ns, desired.ElasticsearchName(p))
	realm, _, _ := unstructured.NestedSlice(es.Object, "spec", "auth", "fileRealm")
	roles, _, _ := unstructured.NestedSlice(es.Object, "spec", "auth", "roles")
	if len(realm) != 1 || realm[0].(map[string]any)["secretName"] != desired.ElasticsearchUserSecretName(p) ||
		len(roles) != 1 || roles[0].(map[string]any)["secretName"] != desired.ElasticsearchRolesSecretName(p) {
		t.Errorf("Elasticsearch spec.auth fileRealm %v roles %v", realm, roles)
	}
	rolesSecret := &corev1.Secret{}
	if err := o.C.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: desired.ElasticsearchRolesSecretName(p)},
		rolesSecret); err != nil {
		t.Fatal(err)
	}
	if yml := string(rolesSecret.Data["roles.yml"]); !strings.Contains(yml, "- sensors-*") {
		t.Errorf("roles.yml does not name the pipeline's indices:\n%s", yml)
	}

	// The password: generated once, kept.
	secret := esUserSecret(t, o, p)
	first := string(secret.Data["password"])
	if len(first) != desired.ESPasswordLength || string(secret.Data["username"]) != "sensors-ingest" ||
		secret.Type != corev1.SecretTypeBasicAuth {
		t.Fatalf("Secret %s: type %s, username %q, a password of %d characters", secret.Name, secret.Type,
			secret.Data["username"], len(first))
	}
	o.Settle(t, p)
	if r := o.Touch(t, p); r.Writes != 0 || r.Err != nil {
		t.Errorf("a reconcile with nothing changed made %d writes (err %v)", r.Writes, r.Err)
	}
	if now := string(esUserSecret(t, o, p).Data["password"]); now != first {
		t.Errorf("the password changed from %q to %q", first, now)
	}

	// A password put into the Secret (a rotation) stays.
	secret.Data["password"] = []byte("rotated-by-hand-0123456789")
	if err := o.C.Update(context.Background(), secret); err != nil {
		t.Fatal(err)
	}
	if r := o.Touch(t, p); r.Err != nil {
		t.Fatal(r.Err)
	}
	if now := string(esUserSecret(t, o, p).Data["password"]); now != "rotated-by-hand-0123456789" {
		t.Errorf("the operator replaced the rotated password with %q", now)
	}

	// A deleted Secret is made again, with a new password.
	if err := o.C.Delete(context.Background(), secret); err != nil {
		t.Fatal(err)
	}
	envtestutil.WaitFor(t, o.C, p, func() error {
		s := esUserSecret(t, o, p)
		if s == nil || s.UID == secret.UID {
			return fmt.Errorf("Secret not made again yet")
		}
		if pw := string(s.Data["password"]); len(pw) != desired.ESPasswordLength || pw == first {
			return fmt.Errorf("new Secret's password %q", pw)
		}
		return nil
	})
}
