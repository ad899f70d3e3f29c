package desired

import (
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/strata-dev/strata/api/v1alpha1"
)

// Driver sizing: the driver of a streaming job only schedules micro-batches. An estimate, not
// overridable.
const (
	DriverCores  = 1
	DriverMemory = "1g"
)

// Restart of the streaming job: the Spark operator resubmits it whenever it stops.
const (
	RestartType          = "Always"
	RestartRetryInterval = 30 // seconds, after a failed run and after a failed submission
)

// Where Spark's Prometheus servlet serves metrics, on the driver's UI port: the driver's own
// metrics (and, with spark.ui.prometheus.enabled, every executor's) in Prometheus format.
const (
	SparkUIPort              = 4040
	SparkMetricsPath         = "/metrics/prometheus"
	SparkExecutorMetricsPath = "/metrics/executors/prometheus"
)

// Shuffle volumes. Spark uses every executor volume whose name starts with spark-local-dir- as
// a local dir (spill, temp and — without our shuffle plugin — shuffle files); the shuffle data
// volume must not become one, or Spark would stripe spill files over the cheap tier too.
const (
	SpillVolumeName       = "spark-local-dir-spill"
	SpillMountPath        = "/var/data/spill"
	ShuffleDataVolumeName = "shuffle-data"
	ShuffleDataMountPath  = "/var/data/shuffle"
	// ShuffleDataDirsConf tells the tiered shuffle plugin where final shuffle files go.
	ShuffleDataDirsConf = "spark.strata.shuffle.dataDirs"
	// ShuffleManagerClass is the tiered shuffle plugin's shuffle manager (jvm/shuffle-plugin/).
	ShuffleManagerClass = "dev.strata.spark.shuffle.TieredShuffleManager"
	// DefaultShufflePluginJar is where the plugin's jar is when spec.spark.shuffle.pluginJar is
	// empty: inside the job's image.
	DefaultShufflePluginJar = "local:///opt/strata/strata-shuffle.jar"
	// ElasticsearchCAMountPath is where the Elasticsearch CA certificate is mounted in the
	// driver and the executors (file ElasticsearchCAKey).
	ElasticsearchCAMountPath = "/etc/strata/elasticsearch-ca"
)

// SparkApplication builds p's SparkApplication (sparkoperator.k8s.io/v1beta2): the streaming
// job, restarted whenever it stops, with the plan's executor count, cores and memory split.
//
// Executor memory: spec.executor.memory is the heap and memoryOverhead is the native overhead
// plus the page-cache reserve; Spark adds spark.memory.offHeap.size to the pod by itself, so
// the pod's memory is the plan's budget (rounded down to whole MiB, as Spark sizes pods). The operator passes these typed fields to
// spark-submit after sparkConf, so SparkConf leaves the same keys out.
//
// Everything the pods need besides that (volumes, environment, secrets) goes through Spark's
// own sparkConf keys rather than the CRD's volumes/env fields: those fields are applied only by
// the Spark operator's mutating webhook, which drops the storage class and size of on-demand
// claims, and without which they are ignored. Metrics use Spark's built-in Prometheus servlet
// (see SparkConf); spec.monitoring is set to say so, without its prometheus section, which
// would make every executor's JVM load a JMX exporter agent jar that the image must contain.
func SparkApplication(in Inputs) *unstructured.Unstructured {
	p := in.Pipeline
	s := p.Spec.Spark
	mem := in.Plan.ExecutorMemory
	version := s.SparkVersion
	if version == "" {
		version = DefaultSparkVersion
	}
	driver := object{"cores": int64(DriverCores), "memory": DriverMemory}
	executor := object{
		"instances":           submittedExecutors(in),
		"cores":               max(int64(in.Plan.ExecutorCores), 1),
		"memory":              SparkSize(mem.Heap.Value()),
		"memoryOverhead":      SparkSize(mem.Overhead.Value() + mem.PageCache.Value()),
		"deleteOnTermination": true,
	}
	driver["serviceAccount"] = DriverServiceAccount(p)
	// Labels the Spark operator hands spark-submit for the pods (PodLabels).
	driver["labels"], executor["labels"] = PodLabels(p, WorkloadSparkDriver), PodLabels(p, WorkloadSparkExecutor)
	if opts := ExecutorJavaOptions(in); opts != "" {
		executor["javaOptions"] = opts
	}
	driver["template"] = podTemplate(in, SparkDriverContainer, nil)
	executor["template"] = podTemplate(in, SparkExecutorContainer, executorAffinity(in))
	spec := object{
		"type":                sparkAppType(s),
		"mode":                "cluster",
		"image":               JobImage(in),
		"mainApplicationFile": s.MainApplicationFile,
		"sparkVersion":        version,
		"restartPolicy": object{
			"type":                             RestartType,
			"onFailureRetryInterval":           int64(RestartRetryInterval),
			"onSubmissionFailureRetryInterval": int64(RestartRetryInterval),
		},
		"sparkConf":  SparkConf(in),
		"driver":     driver,
		"executor":   executor,
		"monitoring": object{"exposeDriverMetrics": true, "exposeExecutorMetrics": true},
	}
	if s.MainClass != "" {
		spec["mainClass"] = s.MainClass
	}
	if RunsIngestJob(p) {
		spec["mainApplicationFile"], spec["mainClass"] = IngestJobFile, IngestJobMainClass
	}
	if len(s.Arguments) > 0 {
		spec["arguments"] = s.Arguments
	}
	return newObject(SparkApplicationGVK, p, SparkApplicationName(p), AppSpark, ComponentSpark, nil, nil,
		object{"spec": spec})
}

// The containers Spark builds its driver and executor pods around; a pod template must name them
// (kubeflow/spark-operator v2.5.2, pkg/common/spark.go: spark-kubernetes-driver and
// spark-kubernetes-executor, the names internal/controller/sparkapplication/submission.go
// passes as spark.kubernetes.*.podTemplateContainerName).
const (
	SparkDriverContainer   = "spark-kubernetes-driver"
	SparkExecutorContainer = "spark-kubernetes-executor"
)

// podTemplate is the driver's or the executors' pod template: the pods run with
// spec.spark.fsGroup, so that the kubelet gives the group write access to their volumes (local
// volumes and fresh filesystems are root-owned 0755; the apache/spark images run as uid 185).
// A template, not podSecurityContext: the Spark operator applies podSecurityContext only through
// its optional mutating webhook, while it always hands the template to spark-submit as
// spark.kubernetes.{driver,executor}.podTemplateFile (kubeflow/spark-operator v2.5.2,
// internal/controller/sparkapplication/submission.go: driverPodTemplateOption,
// executorPodTemplateOption), and Spark keeps the template's pod security context. Only the
// group changes: the user stays the image's. The container gets the credentials from Secrets
// (secretEnv), and the pods the affinity given, if any (executorAffinity). A job of the user's
// also gets elasticsearch-hadoop's truststore: the init
// container writing it and its volumes (eshadoop.go); Spark keeps a template's init containers
// and volumes, replacing only its containers (apache/spark v4.0.2,
// resource-managers/kubernetes/core/src/main/scala/org/apache/spark/deploy/k8s/KubernetesUtils.scala:
// selectSparkContainer).
func podTemplate(in Inputs, container string, affinity object) object {
	p := in.Pipeline
	group := int64(DefaultFSGroup)
	if g := p.Spec.Spark.FSGroup; g != nil {
		group = *g
	}
	c := object{"name": container, "env": secretEnv(p)}
	spec := object{
		"securityContext": object{
			"fsGroup": group,
			// Only a volume whose root is not the group's yet is walked: large volumes of
			// shuffle data are not re-owned at every restart.
			"fsGroupChangePolicy": "OnRootMismatch",
		},
		"containers": []any{c},
	}
	if affinity != nil {
		spec["affinity"] = affinity
	}
	if !RunsIngestJob(p) {
		c["volumeMounts"] = []any{object{"name": ESTruststoreVolume, "mountPath": ESTruststoreMountPath, "readOnly": true}}
		spec["initContainers"] = []any{esTruststoreInit(in)}
		spec["volumes"] = esTruststoreVolumes(p)
	}
	return object{"spec": spec}
}

// executorAffinity is the executors' node affinity: to the nodes of the local tiers their
// on-demand shuffle claims are on (the spill tier's, and the shuffle data tier's when the plan
// puts final shuffle files elsewhere; tierAffinity), nil when neither is local. The driver
// gets none: its only claim, the checkpoint of Strata's own job, is on the cluster's default
// StorageClass (CheckpointClaim). In the pod template, not the SparkApplication's
// executor.affinity: like env, that field is applied only by the Spark operator's mutating
// webhook, to pods built without a template (kubeflow/spark-operator v2.5.2,
// internal/webhook/sparkpod_defaulter.go, addAffinity; see secretEnv), while Spark keeps the
// template's affinity (apache/spark, docs/running-on-kubernetes.md, "Pod template properties":
// affinity is not among the fields Spark overwrites).
func executorAffinity(in Inputs) object {
	spill, _ := placement(in.Plan, v1alpha1.RoleSparkSpill)
	data, _ := placement(in.Plan, v1alpha1.RoleSparkShuffleData)
	return tierAffinity(in, spill.Tier, data.Tier)
}

// sparkAppType is the application type the Spark operator wants: Python and R by the main
// file's extension, else a JVM job (Scala and Java are handled alike).
func sparkAppType(s v1alpha1.SparkSpec) string {
	file := strings.ToLower(s.MainApplicationFile)
	switch {
	case strings.HasSuffix(file, ".py"):
		return "Python"
	case strings.HasSuffix(file, ".r"):
		return "R"
	default:
		return "Scala"
	}
}

// typedKeys are the Spark settings the SparkApplication carries in typed fields (which
// spark-submit receives after sparkConf, so they win) or that the plan decides alone; SparkConf
// drops them so that no setting appears twice with two values.
var typedKeys = []string{
	"spark.executor.instances",
	"spark.executor.cores",
	"spark.executor.memory",
	"spark.executor.memoryOverhead",
	"spark.executor.extraJavaOptions",
	"spark.local.dir",
}

// SparkConf is the SparkApplication's sparkConf: spec.spark.sparkConf, overridden by the
// plan's memory settings, overridden by what the pipeline wires itself (shuffle volumes, the
// Kafka and Elasticsearch endpoints and credentials, metrics), without typedKeys.
func SparkConf(in Inputs) map[string]string {
	conf := mergeConf(in.Pipeline.Spec.Spark.SparkConf, in.Plan.ExecutorMemory.SparkConf, wiredConf(in))
	if off := in.Plan.ExecutorMemory.OffHeap.Value(); off > 0 && conf["spark.memory.offHeap.size"] == "" {
		conf["spark.memory.offHeap.enabled"] = "true"
		conf["spark.memory.offHeap.size"] = SparkSize(off)
	}
	for _, k := range typedKeys {
		delete(conf, k)
	}
	return conf
}

// mergeConf merges Spark settings; a later layer wins over an earlier one.
func mergeConf(layers ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, layer := range layers {
		for k, v := range layer {
			out[k] = v
		}
	}
	return out
}

// ExecutorJavaOptions are the executors' JVM options: the user's
// spark.executor.extraJavaOptions, then the plan's options (the later of two JVM flags wins,
// so the plan's heap behaviour holds).
func ExecutorJavaOptions(in Inputs) string {
	var parts []string
	for _, s := range []string{in.Pipeline.Spec.Spark.SparkConf["spark.executor.extraJavaOptions"],
		in.Plan.ExecutorMemory.JavaOptions} {
		if s = strings.TrimSpace(s); s != "" {
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, " ")
}

// SparkSize formats a byte count as a Spark memory size. Spark sizes executor memory in whole
// MiB (it floors what it reads to MiB), so the size is whole MiB, rounded down like Spark
// would: whole g when possible, else m. Spark's sizes are binary: 1g is 1024m.
func SparkSize(bytes int64) string {
	const mib, gib = 1 << 20, 1 << 30
	switch {
	case bytes <= 0:
		return "0m"
	case bytes%gib == 0:
		return itoa(bytes/gib) + "g"
	default:
		return itoa(bytes/mib) + "m"
	}
}
