package desired

import (
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/strata-dev/strata/api/v1alpha1"
)

// ShuffleVolume is an on-demand PersistentVolumeClaim each executor gets: Spark creates one
// claim per executor pod from these settings (and, with the PVC reuse settings of wiredConf,
// hands a dead executor's claim to its replacement).
type ShuffleVolume struct {
	Name         string
	StorageClass string // empty: the cluster's default StorageClass
	Size         resource.Quantity
	MountPath    string
}

// ShuffleVolumes returns the executors' shuffle volumes: always the spill volume (a Spark local
// dir, on the spill tier), and a separate shuffle data volume when the plan puts final shuffle
// files on another tier. When both roles share a tier, the one local-dir volume holds both, so
// its size is the sum of the two.
func ShuffleVolumes(in Inputs) (spill ShuffleVolume, data *ShuffleVolume) {
	sh := in.Pipeline.Spec.Spark.Shuffle
	sp, _ := placement(in.Plan, v1alpha1.RoleSparkSpill)
	spill = ShuffleVolume{Name: SpillVolumeName, StorageClass: sp.StorageClassName,
		Size: sh.SpillSize.DeepCopy(), MountPath: SpillMountPath}
	if !sp.SizePerReplica.IsZero() {
		spill.Size = sp.SizePerReplica.DeepCopy()
	}
	dp, ok := placement(in.Plan, v1alpha1.RoleSparkShuffleData)
	if !ok {
		return spill, nil
	}
	if dp.Tier == sp.Tier {
		spill.Size.Add(dp.SizePerReplica)
		return spill, nil
	}
	return spill, &ShuffleVolume{Name: ShuffleDataVolumeName, StorageClass: dp.StorageClassName,
		Size: dp.SizePerReplica.DeepCopy(), MountPath: ShuffleDataMountPath}
}

// pvcConf mounts an on-demand claim in every executor. The storage class and size must be given
// here: the Spark operator drops them from an on-demand claim in spec.volumes.
func pvcConf(conf map[string]string, v ShuffleVolume) {
	prefix := "spark.kubernetes.executor.volumes.persistentVolumeClaim." + v.Name + "."
	conf[prefix+"options.claimName"] = "OnDemand"
	conf[prefix+"options.sizeLimit"] = v.Size.String()
	if v.StorageClass != "" {
		conf[prefix+"options.storageClass"] = v.StorageClass
	}
	conf[prefix+"mount.path"] = v.MountPath
	conf[prefix+"mount.readOnly"] = "false"
}

// tieredShuffleConf wires Strata's tiered shuffle plugin (jvm/shuffle-plugin/): its shuffle manager
// writes final shuffle data, index and checksum files into dataDir (the shuffle data tier's
// volume) while spill and temp files stay in Spark's local dir (the spill tier's volume, a
// spark-local-dir-* volume). The jar joins the user's spark.jars, so that the driver and the
// executors load it before they create the shuffle manager. The plugin refuses to start with
// the external shuffle service or with shuffle migration on decommission, so both are off.
func tieredShuffleConf(conf map[string]string, in Inputs, dataDir string) {
	conf[ShuffleDataDirsConf] = dataDir
	conf["spark.shuffle.manager"] = ShuffleManagerClass
	conf["spark.jars"] = appendJar(in.Pipeline.Spec.Spark.SparkConf["spark.jars"], ShufflePluginJar(in))
	conf["spark.shuffle.service.enabled"] = "false"
	conf["spark.storage.decommission.shuffleBlocks.enabled"] = "false"
}

// ShufflePluginJar is where the driver and the executors get the tiered shuffle plugin.
func ShufflePluginJar(in Inputs) string {
	if jar := strings.TrimSpace(in.Pipeline.Spec.Spark.Shuffle.PluginJar); jar != "" {
		return jar
	}
	return DefaultShufflePluginJar
}

// appendJar adds jar to a comma-separated spark.jars list unless it is there already.
func appendJar(jars, jar string) string {
	var out []string
	for _, j := range strings.Split(jars, ",") {
		if j = strings.TrimSpace(j); j != "" && j != jar {
			out = append(out, j)
		}
	}
	return strings.Join(append(out, jar), ",")
}

// How the job's Kafka clients authenticate on the plain listener (Kafka's security.protocol
// and sasl.mechanism), given to every job as KAFKA_SECURITY_PROTOCOL and KAFKA_SASL_MECHANISM.
const (
	KafkaSecurityProtocol = "SASL_PLAINTEXT"
	KafkaSaslMechanism    = "SCRAM-SHA-512"
)

// Environment variables the driver and the executors get from Secrets (secretEnv).
const (
	ESUserEnv     = "ES_USER"
	ESPasswordEnv = "ES_PASSWORD"
)

// secretEnv is the environment the driver's and the executors' containers get from Secrets,
// by secretKeyRef, so that no credential is a Spark setting (the Spark UI and the event log
// show those) nor a field of the SparkApplication: the Kafka JAAS line of the job's KafkaUser
// (the User Operator's Secret) and the job's Elasticsearch user and password.
//
// In the pod template's container: the SparkApplication's driver.env/envFrom (and the
// deprecated envSecretKeyRefs) are applied only by the Spark operator's optional mutating
// webhook, and only to pods it labels for mutation, which it does only when no template is set
// (kubeflow/spark-operator v2.5.2, internal/controller/sparkapplication/submission.go:
// driverConfOption and executorConfOption set sparkoperator.k8s.io/mutated-by-spark-operator
// only for app.Spec.Driver.Template == nil; internal/webhook/sparkpod_defaulter.go: addEnvVars,
// addEnvFrom). The template, which every pipeline has (podTemplate), always reaches
// spark-submit, and Spark builds each pod's container on the template's, keeping its env.
func secretEnv(p *v1alpha1.AnalyticsPipeline) []any {
	ref := func(name, secret, key string) object {
		return object{"name": name, "valueFrom": object{"secretKeyRef": object{"name": secret, "key": key}}}
	}
	return []any{
		ref(KafkaSaslJaasEnv, KafkaUserName(p), KafkaUserJaasKey),
		ref(ESUserEnv, ElasticsearchUserSecretName(p), ESUserSecretUsernameKey),
		ref(ESPasswordEnv, ElasticsearchUserSecretName(p), ESUserSecretPasswordKey),
	}
}

// env sets an environment variable in the driver and in the executors.
func env(conf map[string]string, name, value string) {
	conf["spark.kubernetes.driverEnv."+name] = value
	conf["spark.executorEnv."+name] = value
}

// wiredConf is what the pipeline itself sets in the job's configuration; it wins over the
// user's and the plan's settings.
func wiredConf(in Inputs) map[string]string {
	p := in.Pipeline
	conf := map[string]string{
		// The plan decides the executor count; dynamic allocation would undo it.
		"spark.dynamicAllocation.enabled": "false",
		// Executors' shuffle claims belong to the driver and pass to replacement executors,
		// instead of piling up (on local tiers, every claim holds a whole disk).
		"spark.kubernetes.driver.ownPersistentVolumeClaim":         "true",
		"spark.kubernetes.driver.reusePersistentVolumeClaim":       "true",
		"spark.kubernetes.driver.waitToReusePersistentVolumeClaim": "true",
	}

	spill, data := ShuffleVolumes(in)
	pvcConf(conf, spill)
	if data != nil {
		pvcConf(conf, *data)
		tieredShuffleConf(conf, in, data.MountPath)
	}

	// Kafka: the job reads these settings or the environment. The listener wants SCRAM-SHA-512
	// as the job's KafkaUser; the JAAS line with its password comes from the User Operator's
	// Secret (secretEnv), never from a setting.
	conf[KafkaBootstrapConf] = BootstrapServers(p)
	conf["spark.strata.kafka.topic"] = TopicName(p)
	env(conf, "KAFKA_BOOTSTRAP_SERVERS", BootstrapServers(p))
	env(conf, "KAFKA_TOPIC", TopicName(p))
	env(conf, "KAFKA_SECURITY_PROTOCOL", KafkaSecurityProtocol)
	env(conf, "KAFKA_SASL_MECHANISM", KafkaSaslMechanism)

	// Elasticsearch through ECK's HTTPS service, as elasticsearch-hadoop reads it (spark.es.*),
	// as the job's own user (elasticsearchuser.go), whose password comes from its Secret
	// (secretEnv), and with ECK's CA certificate mounted. The password is never a Spark
	// setting: Strata's job reads it from ES_PASSWORD, a job of the user's through
	// elasticsearch-hadoop's secure settings store, with a truststore made from the CA
	// (esHadoopConf).
	conf["spark.es.nodes"] = ElasticsearchServiceHost(p)
	conf["spark.es.port"] = strconv.Itoa(ElasticsearchPort)
	conf["spark.es.nodes.wan.only"] = "true"
	conf["spark.es.net.ssl"] = "true"
	conf["spark.es.net.http.auth.user"] = ElasticsearchJobUser(p)
	if in.Plan.Shards > 0 {
		conf[ESShardsConf] = strconv.Itoa(int(in.Plan.Shards))
	}
	indexLifecycleConf(conf, in.Plan.Retention)
	env(conf, "ES_URL", ElasticsearchServiceURL(p))
	env(conf, "ES_CA_CERT", ElasticsearchCAMountPath+"/"+ElasticsearchCAKey)
	conf["spark.kubernetes.driver.secrets."+ElasticsearchCASecret(p)] = ElasticsearchCAMountPath
	conf["spark.kubernetes.executor.secrets."+ElasticsearchCASecret(p)] = ElasticsearchCAMountPath

	// Metrics: Spark's Prometheus servlet on the driver's UI port, with the executors' metrics
	// and the streaming query's rates; a fixed namespace keeps metric names stable across
	// restarts (the default is the application ID, new with every run).
	conf["spark.ui.prometheus.enabled"] = "true"
	conf["spark.metrics.conf.*.sink.prometheusServlet.class"] = "org.apache.spark.metrics.sink.PrometheusServlet"
	conf["spark.metrics.conf.*.sink.prometheusServlet.path"] = SparkMetricsPath
	conf["spark.metrics.namespace"] = p.Name
	conf["spark.metrics.appStatusSource.enabled"] = "true"
	conf["spark.sql.streaming.metricsEnabled"] = "true"
	if RunsIngestJob(p) {
		ingestJobConf(conf, in)
	} else {
		esHadoopConf(conf, in)
	}
	return conf
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
