package desired

import (
	"bytes"
	"encoding/json"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestEsHadoopConf: a job of the user's gets elasticsearch-hadoop's secure settings store and
// truststore in its configuration; Strata's job, which reads neither, does not; the password is
// in no setting either way.
func TestEsHadoopConf(t *testing.T) {
	for _, tc := range []struct {
		name     string
		in       Inputs
		userType string // spark.es.net.ssl.keystore.type in spec.spark.sparkConf
		want     map[string]string
	}{
		{"user's job", splitTiers(t), "", map[string]string{
			"spark.es.nodes":              "sensors-es-http.analytics.svc",
			"spark.es.port":               "9200",
			"spark.es.nodes.wan.only":     "true",
			"spark.es.net.ssl":            "true",
			"spark.es.net.http.auth.user": "sensors-ingest",
			"spark.es.keystore.location":  "file:///etc/strata/elasticsearch-keystore/es.keystore",
			"spark.kubernetes.driver.secrets.sensors-ingest-es-keystore":   "/etc/strata/elasticsearch-keystore",
			"spark.kubernetes.executor.secrets.sensors-ingest-es-keystore": "/etc/strata/elasticsearch-keystore",
			"spark.es.net.ssl.truststore.location":                         "file:///var/run/strata/elasticsearch-truststore/truststore.p12",
			"spark.es.net.ssl.truststore.pass":                             "changeit",
			"spark.es.net.ssl.keystore.type":                               "PKCS12",
		}},
		{"user's job with a keystore type of its own", splitTiers(t), "JKS", map[string]string{
			"spark.es.net.ssl.keystore.type":       "JKS",
			"spark.es.net.ssl.truststore.location": "file:///var/run/strata/elasticsearch-truststore/truststore.p12",
		}},
		{"Strata's job", strataJob(t), "", map[string]string{
			"spark.es.nodes":                                             "sensors-es-http.analytics.svc",
			"spark.es.keystore.location":                                 "",
			"spark.es.net.ssl.truststore.location":                       "",
			"spark.es.net.ssl.truststore.pass":                           "",
			"spark.es.net.ssl.keystore.type":                             "",
			"spark.kubernetes.driver.secrets.sensors-ingest-es-keystore": "",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.userType != "" {
				tc.in.Pipeline = tc.in.Pipeline.DeepCopy()
				tc.in.Pipeline.Spec.Spark.SparkConf = map[string]string{"spark.es.net.ssl.keystore.type": tc.userType}
			}
			conf := SparkConf(tc.in)
			for k, want := range tc.want {
				if got := conf[k]; got != want {
					t.Errorf("%s = %q, want %q", k, got, want)
				}
			}
			for k, v := range conf {
				if v == goldenPassword || k == "spark.es.net.http.auth.pass" {
					t.Errorf("the password is a setting: %s", k)
				}
			}
		})
	}
}

// TestElasticsearchKeystoreSecret: the store holds the password under es-hadoop's setting name,
// the same bytes for the same password (an apply rewrites nothing), other bytes for another;
// no store without a password; no Secret for Strata's job.
func TestElasticsearchKeystoreSecret(t *testing.T) {
	if s := ElasticsearchKeystoreSecret(strataJob(t)); s != nil {
		t.Errorf("Strata's job got %s", s.GetName())
	}
	in := splitTiers(t)
	s := ElasticsearchKeystoreSecret(in)
	if s.GetName() != "sensors-ingest-es-keystore" || s.GetNamespace() != "analytics" {
		t.Errorf("Secret %s/%s", s.GetNamespace(), s.GetName())
	}
	store := secretValue(t, s, ESKeystoreKey)
	if got := decodeEsHadoopKeystore(t, []byte(store)); len(got) != 1 || got[ESKeystorePasswordSetting] != goldenPassword {
		t.Errorf("store holds %v", got)
	}
	if again := secretValue(t, ElasticsearchKeystoreSecret(in), ESKeystoreKey); again != store {
		t.Error("the same password gave another store")
	}
	in.ElasticsearchPassword = "another0password0of0thirty0two0c"
	if other := secretValue(t, ElasticsearchKeystoreSecret(in), ESKeystoreKey); other == store {
		t.Error("another password gave the same store")
	}
	in.ElasticsearchPassword = ""
	if data, _, _ := unstructured.NestedMap(ElasticsearchKeystoreSecret(in).Object, "data"); len(data) != 0 {
		t.Errorf("without a password the Secret holds %v", data)
	}
	found := false
	for _, u := range All(splitTiers(t)) {
		found = found || u.GetName() == "sensors-ingest-es-keystore"
	}
	if !found {
		t.Error("All does not build the keystore Secret")
	}
}

// TestSparkTemplateTruststore: a user's job's pods get the init container writing the truststore
// from ECK's CA, in the job's image, and the Spark container mounts it; Strata's job's pods
// get none of it. The template is free-form in the CRD: it must decode as a pod template.
func TestSparkTemplateTruststore(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   Inputs
		want bool
	}{{"user's job", splitTiers(t), true}, {"Strata's job", strataJob(t), false}} {
		t.Run(tc.name, func(t *testing.T) {
			app := SparkApplication(tc.in)
			for _, role := range []string{"driver", "executor"} {
				raw, _ := json.Marshal(field(t, app, "spec", role, "template"))
				dec := json.NewDecoder(bytes.NewReader(raw))
				dec.DisallowUnknownFields()
				var tmpl corev1.PodTemplateSpec
				if err := dec.Decode(&tmpl); err != nil {
					t.Fatalf("%s template: %v", role, err)
				}
				spec := tmpl.Spec
				if !tc.want {
					if len(spec.InitContainers) > 0 || len(spec.Volumes) > 0 || len(spec.Containers[0].VolumeMounts) > 0 {
						t.Errorf("%s: init containers %v, volumes %v", role, spec.InitContainers, spec.Volumes)
					}
					continue
				}
				if len(spec.InitContainers) != 1 {
					t.Fatalf("%s: init containers %v", role, spec.InitContainers)
				}
				init := spec.InitContainers[0]
				if init.Name != ESTruststoreInitContainer || init.Image != JobImage(tc.in) || init.Command[0] != "sh" {
					t.Errorf("%s: init container %s %s %v", role, init.Name, init.Image, init.Command)
				}
				volumes := map[string]corev1.VolumeSource{}
				for _, v := range spec.Volumes {
					volumes[v.Name] = v.VolumeSource
				}
				if s := volumes[ESCAVolume].Secret; s == nil || s.SecretName != ElasticsearchCASecret(tc.in.Pipeline) ||
					volumes[ESTruststoreVolume].EmptyDir == nil {
					t.Errorf("%s: volumes %+v", role, spec.Volumes)
				}
				for _, m := range init.VolumeMounts {
					if _, ok := volumes[m.Name]; !ok {
						t.Errorf("%s: init container mounts %s, no volume", role, m.Name)
					}
				}
				if m := spec.Containers[0].VolumeMounts; len(m) != 1 || m[0].Name != ESTruststoreVolume ||
					m[0].MountPath != ESTruststoreMountPath || !m[0].ReadOnly {
					t.Errorf("%s: Spark container mounts %+v", role, m)
				}
			}
		})
	}
}
