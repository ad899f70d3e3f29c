package desired

import (
	"encoding/base64"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/strata-dev/strata/api/v1alpha1"
)

// A job of the user's writes to Elasticsearch with elasticsearch-hadoop (es-spark), which reads
// its settings from the job's Spark configuration: spark.es.<setting> is es.<setting>
// (elastic/elasticsearch-hadoop v9.3.2, unchanged through v9.4.4;
// spark/core/src/main/scala/org/elasticsearch/spark/cfg/SparkSettings.java: getProperty). Besides
// the endpoint and user every job gets (wiredConf), it needs two things to get in, and neither
// may be a plain setting: the Spark UI and event log show settings, the SparkApplication carries
// them, and es-hadoop reads none from the environment.
//
//   - The password: es.net.http.auth.pass is read through SecureSettings, from the store at
//     es.keystore.location before the settings (mr/src/main/java/org/elasticsearch/hadoop/
//     security/SecureSettings.java: getSecureProperty; rest/commonshttp/CommonsHttpTransport.java:
//     addHttpAuth). Strata writes that store (eskeystore.go) into a Secret of its own, from the
//     password of the job's user Secret, and Spark mounts it in the driver and the executors.
//     The store's password is always empty (KeystoreWrapper.java: DEFAULT_PASS), which the JDK's
//     keytool refuses to write ("Keystore password must be at least 6 characters"), so no init
//     step in the pod could make it.
//   - The CA: ECK publishes the HTTP CA as PEM (<es>-es-http-certs-public, ca.crt), and es-hadoop
//     loads es.net.ssl.truststore.location with java.security.KeyStore, of type
//     es.net.ssl.keystore.type (default JKS), which reads no PEM
//     (rest/commonshttp/SSLSocketFactory.java: loadKeyStore, loadTrustManagers). An init
//     container of the job's image imports every certificate of ca.crt with keytool into a
//     PKCS#12 truststore on an emptyDir the Spark container mounts. At each pod start, so the
//     truststore is always the CA ECK publishes then; an operator-built one would be stale
//     after ECK renews its CA until the pipeline happens to reconcile (nothing watches ECK's
//     Secrets: the operator's Secret cache holds only its own). keytool ships with every JRE,
//     and a Spark image has a shell (its Kubernetes entrypoint, entrypoint.sh, is a bash script).
//
// The truststore holds public certificates only: its password is not a secret, and keytool
// insists on one.
const (
	// ESKeystoreKey is the store's key in ElasticsearchKeystoreSecret.
	ESKeystoreKey = "es.keystore"
	// ESKeystoreMountPath is where the driver and the executors mount that Secret.
	ESKeystoreMountPath = "/etc/strata/elasticsearch-keystore"
	// ESTruststoreVolume is the emptyDir the init container writes the truststore into.
	ESTruststoreVolume = "elasticsearch-truststore"
	// ESTruststoreMountPath is where the init container and the Spark container mount it.
	ESTruststoreMountPath = "/var/run/strata/elasticsearch-truststore"
	// ESTruststoreFile is the truststore in that volume.
	ESTruststoreFile = ESTruststoreMountPath + "/truststore.p12"
	// ESTruststorePassword is the truststore's password (not a secret: see above).
	ESTruststorePassword = "changeit"
	// ESTruststoreInitContainer is the init container that writes the truststore.
	ESTruststoreInitContainer = "elasticsearch-truststore"
	// ESCAVolume is the init container's volume of ECK's CA Secret (Spark mounts the same
	// Secret in its own container under a name of its own, <secret>-volume).
	ESCAVolume = "elasticsearch-ca"
)

// ElasticsearchKeystoreSecretName is the Secret holding elasticsearch-hadoop's secure settings
// store for p's job.
func ElasticsearchKeystoreSecretName(p *v1alpha1.AnalyticsPipeline) string {
	return p.Name + "-ingest-es-keystore"
}

// ElasticsearchKeystoreSecret builds the Secret holding elasticsearch-hadoop's secure settings
// store with the job's password (in.ElasticsearchPassword), or nil when the pipeline runs
// Strata's job, which reads the password from ES_PASSWORD. Without a password (a dry run,
// `strata plan`) the Secret has no store, as the user Secret has no password.
func ElasticsearchKeystoreSecret(in Inputs) *unstructured.Unstructured {
	p := in.Pipeline
	if RunsIngestJob(p) {
		return nil
	}
	data := object{}
	if in.ElasticsearchPassword != "" {
		store, err := encodeEsHadoopKeystore(map[string]string{ESKeystorePasswordSetting: in.ElasticsearchPassword})
		if err != nil {
			panic(fmt.Sprintf("desired: encoding the es-hadoop keystore: %v", err)) // only an empty value fails
		}
		data[ESKeystoreKey] = base64.StdEncoding.EncodeToString(store)
	}
	return newObject(SecretGVK, p, ElasticsearchKeystoreSecretName(p), AppElasticsearch, ComponentElasticsearchUser,
		nil, nil, object{"type": "Opaque", "data": data})
}

// esHadoopConf sets what a job of the user's needs besides the endpoint and user every job gets:
// the secure settings store and the truststore (see above). spark.es.net.ssl.keystore.type also
// names the type of the truststore; a type the user set stays (the JDK reads a PKCS#12 file as
// a JKS one and back: keystore.type.compat).
func esHadoopConf(conf map[string]string, in Inputs) {
	p := in.Pipeline
	conf["spark.es.keystore.location"] = "file://" + ESKeystoreMountPath + "/" + ESKeystoreKey
	conf["spark.kubernetes.driver.secrets."+ElasticsearchKeystoreSecretName(p)] = ESKeystoreMountPath
	conf["spark.kubernetes.executor.secrets."+ElasticsearchKeystoreSecretName(p)] = ESKeystoreMountPath
	conf["spark.es.net.ssl.truststore.location"] = "file://" + ESTruststoreFile
	conf["spark.es.net.ssl.truststore.pass"] = ESTruststorePassword
	if p.Spec.Spark.SparkConf["spark.es.net.ssl.keystore.type"] == "" {
		conf["spark.es.net.ssl.keystore.type"] = "PKCS12"
	}
}

// esTruststoreScript imports each certificate of ECK's ca.crt (one for ECK's own CA; a bundle
// would hold more) as a trusted entry; keytool -importcert would take only the first of a
// bundle. The store is made afresh: a pod whose sandbox is recreated runs its init containers
// again on the same emptyDir, where an alias already taken would fail the import.
var esTruststoreScript = fmt.Sprintf(`set -eu
store='%[1]s'
rm -f "$store"
n=0
cert=
while IFS= read -r line || [ -n "$line" ]; do
  case "$line" in *'-----BEGIN CERTIFICATE-----'*) cert= ;; esac
  cert="$cert$line
"
  case "$line" in *'-----END CERTIFICATE-----'*)
    n=$((n+1))
    printf '%%s' "$cert" | keytool -importcert -noprompt -alias "elasticsearch-ca-$n" \
      -keystore "$store" -storetype PKCS12 -storepass '%[2]s'
    ;;
  esac
done < '%[3]s'
if [ "$n" -eq 0 ]; then echo "no certificate in %[3]s" >&2; exit 1; fi
`, ESTruststoreFile, ESTruststorePassword, ElasticsearchCAMountPath+"/"+ElasticsearchCAKey)

// esTruststoreInit is the init container writing the truststore, in the job's image. It
// requests a little CPU and memory (keytool is a short JVM run), so that a namespace's quota
// admits the pod; no limit, so that an image's JVM options cannot get keytool killed.
func esTruststoreInit(in Inputs) object {
	return object{
		"name":    ESTruststoreInitContainer,
		"image":   JobImage(in),
		"command": []string{"sh", "-c", esTruststoreScript},
		"volumeMounts": []any{
			object{"name": ESCAVolume, "mountPath": ElasticsearchCAMountPath, "readOnly": true},
			object{"name": ESTruststoreVolume, "mountPath": ESTruststoreMountPath},
		},
		"resources": object{"requests": object{"cpu": "100m", "memory": "256Mi"}},
	}
}

// esTruststoreVolumes are the pod template's volumes for the init container: ECK's CA Secret
// and the truststore's emptyDir.
func esTruststoreVolumes(p *v1alpha1.AnalyticsPipeline) []any {
	return []any{
		object{"name": ESCAVolume, "secret": object{"secretName": ElasticsearchCASecret(p)}},
		object{"name": ESTruststoreVolume, "emptyDir": object{}},
	}
}
