package controllers

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// UpstreamKind is a kind of another operator that Strata writes, and who provides it.
type UpstreamKind struct {
	GVK schema.GroupVersionKind
	// CRD is the CustomResourceDefinition's name, watched so that a late install is noticed.
	CRD string
	// Operator says what to install when the kind is missing.
	Operator string
	// Condition is the pipeline condition that reports the kind missing.
	Condition string
}

// The upstream kinds a pipeline's children are made of.
var (
	KindKafka            = strimziKind("Kafka", "kafkas.kafka.strimzi.io")
	KindKafkaNodePool    = strimziKind("KafkaNodePool", "kafkanodepools.kafka.strimzi.io")
	KindKafkaTopic       = strimziKind("KafkaTopic", "kafkatopics.kafka.strimzi.io")
	KindKafkaRebalance   = strimziKind("KafkaRebalance", "kafkarebalances.kafka.strimzi.io")
	KindSparkApplication = UpstreamKind{
		GVK: schema.GroupVersionKind{Group: "sparkoperator.k8s.io", Version: "v1beta2", Kind: "SparkApplication"},
		CRD: "sparkapplications.sparkoperator.k8s.io", Operator: "the Kubeflow Spark operator 2.x", Condition: "SparkReady",
	}
	KindElasticsearch = UpstreamKind{
		GVK: schema.GroupVersionKind{Group: "elasticsearch.k8s.elastic.co", Version: "v1", Kind: "Elasticsearch"},
		CRD: "elasticsearches.elasticsearch.k8s.elastic.co", Operator: "ECK 3.x", Condition: "ElasticsearchReady",
	}
	// UpstreamKinds lists every kind above.
	UpstreamKinds = []UpstreamKind{KindKafka, KindKafkaNodePool, KindKafkaTopic, KindKafkaRebalance, KindSparkApplication, KindElasticsearch}
)

// strimziKind is a kafka.strimzi.io/v1 kind, reported on KafkaReady.
func strimziKind(kind, crd string) UpstreamKind {
	return UpstreamKind{
		GVK: schema.GroupVersionKind{Group: "kafka.strimzi.io", Version: "v1", Kind: kind},
		CRD: crd, Operator: "Strimzi 1.x", Condition: "KafkaReady",
	}
}

// upstreamCRDNames is the set of CRD names of UpstreamKinds.
func upstreamCRDNames() map[string]bool {
	names := map[string]bool{}
	for _, k := range UpstreamKinds {
		names[k.CRD] = true
	}
	return names
}

// missingKinds returns the upstream kinds the API server does not serve. The manager's REST
// mapper discovers lazily and looks again on a miss, so a CRD installed after the operator
// started is found on the next reconcile.
func missingKinds(mapper meta.RESTMapper) ([]UpstreamKind, error) {
	var missing []UpstreamKind
	for _, k := range UpstreamKinds {
		_, err := mapper.RESTMapping(k.GVK.GroupKind(), k.GVK.Version)
		switch {
		case meta.IsNoMatchError(err):
			missing = append(missing, k)
		case err != nil:
			return nil, fmt.Errorf("discovering %s: %w", k.GVK, err)
		}
	}
	return missing, nil
}

// missingMessage says which operator to install for the missing kinds of one condition.
func missingMessage(missing []UpstreamKind, condition string) string {
	var kinds, operator string
	for _, k := range missing {
		if k.Condition != condition {
			continue
		}
		if kinds != "" {
			kinds += ", "
		}
		kinds += k.GVK.GroupVersion().String() + " " + k.GVK.Kind
		operator = k.Operator
	}
	if kinds == "" {
		return ""
	}
	return fmt.Sprintf("%s not served by the API server: install %s; the pipeline continues when its CRDs appear", kinds, operator)
}
