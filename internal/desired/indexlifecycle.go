package desired

import (
	"strconv"

	"github.com/strata-dev/strata/api/v1alpha1"
)

// The index lifecycle the ingestion job creates (its index template and ILM policy), as Spark
// settings. The plan chooses the figures so that a data node stays under Elasticsearch's high
// watermark at the planned rate (internal/plan/retention.go); the job only turns them into the
// policy: rollover {max_primary_shard_size, max_age}, then delete {min_age} after rollover.
// Values are in Elasticsearch's own units ("<n>b" bytes, "<n>s" seconds), so the job can copy
// them into the policy unchanged.
const (
	ESReplicasConf            = "spark.strata.elasticsearch.replicas"
	ESRolloverMaxShardConf    = "spark.strata.elasticsearch.rollover.maxPrimaryShardSize"
	ESRolloverMaxAgeConf      = "spark.strata.elasticsearch.rollover.maxAge"
	ESDeleteAfterRolloverConf = "spark.strata.elasticsearch.delete.minAge"
)

// indexLifecycleConf sets the lifecycle keys from the plan; a plan without a lifecycle (a
// volume too small for one) sets only the replica count.
func indexLifecycleConf(conf map[string]string, r v1alpha1.RetentionPlan) {
	conf[ESReplicasConf] = strconv.Itoa(int(r.ElasticsearchReplicas))
	if r.ElasticsearchRolloverBytes <= 0 || r.ElasticsearchRolloverSeconds <= 0 || r.ElasticsearchDeleteAfterSeconds <= 0 {
		return
	}
	conf[ESRolloverMaxShardConf] = strconv.FormatInt(r.ElasticsearchRolloverBytes, 10) + "b"
	conf[ESRolloverMaxAgeConf] = strconv.FormatInt(r.ElasticsearchRolloverSeconds, 10) + "s"
	conf[ESDeleteAfterRolloverConf] = strconv.FormatInt(r.ElasticsearchDeleteAfterSeconds, 10) + "s"
}
