package desired

import (
	"strconv"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/strata-dev/strata/api/v1alpha1"
)

// Strata's own ingestion job (jvm/ingest-job, docs/ingest-job.md): where it is in the image
// jvm/Dockerfile builds, and the volume its streaming checkpoint lives on.
const (
	// DefaultIngestImage is Strata's job image (jvm/Dockerfile, `make job-image`) at the
	// operator's version, beside the operator's own image (ghcr.io/strata-dev/strata, the
	// chart's appVersion): the image a pipeline runs when spec.spark.image is absent, unless
	// the manager's --ingest-image (the chart's ingestJob.image) names another.
	DefaultIngestImage = "ghcr.io/strata-dev/strata-ingest:0.1.0"
	// IngestJobFile is the job's jar inside Strata's job image.
	IngestJobFile = "local:///opt/strata/strata-ingest.jar"
	// IngestJobMainClass is the job's main class.
	IngestJobMainClass = "dev.strata.ingest.IngestJob"
	// CheckpointVolumeName is the driver volume holding the streaming checkpoint.
	CheckpointVolumeName = "checkpoint"
	// CheckpointMountPath is where the driver mounts it; the checkpoint is a directory below,
	// so that the filesystem's own entries (lost+found) stay out of it.
	CheckpointMountPath = "/var/data/checkpoint"
	// DefaultCheckpointSize is the checkpoint claim's size. Structured Streaming keeps a few
	// small files per micro-batch (offsets, commits; the job has no state store) and deletes
	// all but the last spark.sql.streaming.minBatchesToRetain (100) batches, so a gibibyte
	// is far more than it needs; it is the smallest size most provisioners round to anyway.
	DefaultCheckpointSize = "1Gi"
	// MicroBatchSeconds is the planned ingest one micro-batch may hold at most. The job runs
	// its micro-batches back to back (Structured Streaming's default trigger), so at the
	// planned rate a batch holds whatever arrived during the previous one; the cap only bites
	// after a stop or on a backlog, where it keeps each batch to seconds of the catch-up rate
	// instead of the whole backlog in one batch (executor memory, and a restart that redoes
	// minutes of work). Ten seconds keeps a batch's fixed cost (scheduling, the last bulk
	// round trip, the offset commit) small next to its records.
	MicroBatchSeconds = 10
)

// The job's keys (jvm/ingest-job/src/main/java/dev/strata/ingest/IngestConf.java names the
// same strings; TestIngestJobKeysMatchTheJob reads that file). The lifecycle keys are in
// indexlifecycle.go, the Kafka endpoint's in sparkconf.go.
const (
	PipelineConf             = "spark.strata.pipeline"
	CheckpointDirConf        = "spark.strata.checkpointDir"
	MaxOffsetsPerTriggerConf = "spark.strata.kafka.maxOffsetsPerTrigger"
	MinPartitionsConf        = "spark.strata.kafka.minPartitions"
	ESURLConf                = "spark.strata.elasticsearch.url"
	ESIndexConf              = "spark.strata.elasticsearch.index"
	ESCAPathConf             = "spark.strata.elasticsearch.caPath"
	ESUserEnvConf            = "spark.strata.elasticsearch.userEnv"
	ESPasswordEnvConf        = "spark.strata.elasticsearch.passwordEnv"
	ESShardsConf             = "spark.strata.elasticsearch.shards"
	KafkaSaslJaasEnvConf     = "spark.strata.kafka.saslJaasConfigEnv"
	KafkaBootstrapConf       = "spark.strata.kafka.bootstrapServers"
)

// PersistentVolumeClaimGVK is the checkpoint claim's kind.
var PersistentVolumeClaimGVK = schema.GroupVersionKind{Version: "v1", Kind: "PersistentVolumeClaim"}

// RunsIngestJob says whether p's SparkApplication runs Strata's ingestion job rather than a job
// of the user's: the job's jar and main class, or none named (spec.spark leaves them to
// Strata). Only Strata's job gets the keys and the checkpoint volume below; a user's own job
// keeps the configuration it always had.
func RunsIngestJob(p *v1alpha1.AnalyticsPipeline) bool {
	s := p.Spec.Spark
	return (s.MainApplicationFile == "" || s.MainApplicationFile == IngestJobFile) &&
		(s.MainClass == "" || s.MainClass == IngestJobMainClass)
}

// JobImage is the SparkApplication's image: spec.spark.image, else Strata's job image (the
// manager's --ingest-image, else DefaultIngestImage).
func JobImage(in Inputs) string {
	if img := in.Pipeline.Spec.Spark.Image; img != "" {
		return img
	}
	if in.IngestImage != "" {
		return in.IngestImage
	}
	return DefaultIngestImage
}

// CheckpointClaimName is the PersistentVolumeClaim holding p's streaming checkpoint.
func CheckpointClaimName(p *v1alpha1.AnalyticsPipeline) string { return p.Name + "-checkpoint" }

// CheckpointDir is the streaming checkpoint's directory in the driver.
const CheckpointDir = CheckpointMountPath + "/ingest"

// CheckpointClaim is the claim the driver mounts for the streaming checkpoint, or nil when the
// pipeline runs a job of the user's. It is the pipeline's own child, not an on-demand claim of
// Spark's: those belong to the driver pod and go with it, and the checkpoint must outlive
// every driver (it is what makes a restart resume where the last run stopped). The cluster's
// default StorageClass: the checkpoint is small and read only at start, and a local tier's
// claim would take a whole disk and pin the driver to one node.
func CheckpointClaim(in Inputs) *unstructured.Unstructured {
	p := in.Pipeline
	if !RunsIngestJob(p) {
		return nil
	}
	return newObject(PersistentVolumeClaimGVK, p, CheckpointClaimName(p), AppSpark, ComponentSpark, nil, nil,
		object{"spec": object{
			"accessModes": []string{"ReadWriteOnce"},
			"volumeMode":  "Filesystem", // the server's default, spelled so that an apply changes nothing
			"resources":   object{"requests": object{"storage": DefaultCheckpointSize}},
		}})
}

// ingestJobConf sets the keys Strata's job requires besides those every job gets (Kafka
// endpoint, index lifecycle), from the plan and the spec.
func ingestJobConf(conf map[string]string, in Inputs) {
	p := in.Pipeline
	// The job's name for the pipeline is also the consumer group it commits its progress to,
	// under which kafka_exporter reports the lag.
	conf[PipelineConf] = p.Name
	prefix := "spark.kubernetes.driver.volumes.persistentVolumeClaim." + CheckpointVolumeName + "."
	conf[prefix+"options.claimName"] = CheckpointClaimName(p)
	conf[prefix+"mount.path"] = CheckpointMountPath
	conf[prefix+"mount.readOnly"] = "false"
	conf[CheckpointDirConf] = CheckpointDir

	conf[MaxOffsetsPerTriggerConf] = strconv.FormatInt(RecordsPerMicroBatch(p), 10)
	// One Kafka partition is one Spark task: with fewer partitions than cores, cores idle. A job
	// that changes its executors in place is split for the most it may run (spec.spark.executors.max):
	// a count from the plan would change the SparkApplication, and resubmit the job, at each step.
	executors, cores := executorCount(in.Plan), max(int64(in.Plan.ExecutorCores), 1)
	if ScalesExecutorsInPlace(p) {
		executors = max(executors, int64(p.Spec.Spark.Executors.Max))
		conf[ExecutorsConfigMapConf] = ExecutorsConfigMapName(p)
	}
	conf[MinPartitionsConf] = strconv.FormatInt(executors*cores, 10)

	conf[ESURLConf] = ElasticsearchServiceURL(p)
	conf[ESIndexConf] = ElasticsearchIndex(p)
	conf[ESCAPathConf] = ElasticsearchCAMountPath + "/" + ElasticsearchCAKey
	// The variables the containers get from the job's Secrets (sparkconf.go, secretEnv).
	conf[ESUserEnvConf] = ESUserEnv
	conf[ESPasswordEnvConf] = ESPasswordEnv
	conf[KafkaSaslJaasEnvConf] = KafkaSaslJaasEnv
	// The job requires a shard count for its index template; a plan that has none (no data
	// node planned yet) gets one shard per planned data node, at least one.
	if conf[ESShardsConf] == "" {
		conf[ESShardsConf] = strconv.Itoa(int(max(in.Plan.ElasticsearchDataNodes, 1)))
	}
}

// RecordsPerMicroBatch is the job's maxOffsetsPerTrigger: MicroBatchSeconds of the rate the
// pipeline must read at, the catch-up rate (spec.workload.consumerMessagesPerSecond) when it
// is above the ingest, so that catching up is not capped below the rate the plan sized for.
func RecordsPerMicroBatch(p *v1alpha1.AnalyticsPipeline) int64 {
	rate := max(p.Spec.Workload.MessagesPerSecond, p.Spec.Workload.ConsumerMessagesPerSecond, 1)
	return rate * MicroBatchSeconds
}
