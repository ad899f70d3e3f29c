package pipeline

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/internal/desired"
)

// ChildKind is a kind of object a pipeline's children are made of, and who provides it.
type ChildKind struct {
	GVK schema.GroupVersionKind
	// CRD is the CustomResourceDefinition's name, watched so that a late install is noticed;
	// "" for a built-in kind, which is always served.
	CRD string
	// Operator says what to install when the kind is missing.
	Operator string
	// Condition is the pipeline condition that reports the kind missing, or a refused apply
	// of a child of this kind.
	Condition string
}

// ChildKinds is the one list of the kinds internal/desired builds for a pipeline (their
// GroupVersionKinds are spelled in internal/desired). Adding a child kind is a row here, its
// builder in desired.All and its RBAC marker on Reconciler: the controller watches,
// applies, prunes and reports it from this list.
var ChildKinds = []ChildKind{
	{GVK: desired.ConfigMapGVK, Condition: v1alpha1.ConditionKafkaReady}, // Kafka's metrics configuration; also the job's executor target
	strimziKind(desired.KafkaGVK, "kafkas"),
	strimziKind(desired.KafkaNodePoolGVK, "kafkanodepools"),
	strimziKind(desired.KafkaTopicGVK, "kafkatopics"),
	strimziKind(desired.KafkaRebalanceGVK, "kafkarebalances"),
	strimziKind(desired.KafkaUserGVK, "kafkausers"), // the job's Kafka identity
	{GVK: desired.SparkApplicationGVK, CRD: "sparkapplications.sparkoperator.k8s.io",
		Operator: "the Kubeflow Spark operator 2.x", Condition: v1alpha1.ConditionSparkReady},
	// The ingestion job's checkpoint (Strata's own job only), reported with the job.
	{GVK: desired.PersistentVolumeClaimGVK, Condition: v1alpha1.ConditionSparkReady},
	{GVK: desired.ElasticsearchGVK, CRD: "elasticsearches.elasticsearch.k8s.elastic.co",
		Operator: "ECK 3.x", Condition: v1alpha1.ConditionElasticsearchReady},
	// The job's Elasticsearch user and role, reported with Elasticsearch.
	{GVK: desired.SecretGVK, Condition: v1alpha1.ConditionElasticsearchReady},
	// The Spark driver's identity.
	{GVK: desired.ServiceAccountGVK, Condition: v1alpha1.ConditionSparkReady},
	{GVK: desired.RoleBindingGVK, Condition: v1alpha1.ConditionSparkReady},
}

// strimziKind is a kafka.strimzi.io kind, reported on KafkaReady.
func strimziKind(gvk schema.GroupVersionKind, plural string) ChildKind {
	return ChildKind{GVK: gvk, CRD: plural + "." + gvk.Group, Operator: "Strimzi 1.x", Condition: v1alpha1.ConditionKafkaReady}
}

// childKind returns the row of gvk.
func childKind(gvk schema.GroupVersionKind) (ChildKind, bool) {
	for _, k := range ChildKinds {
		if k.GVK == gvk {
			return k, true
		}
	}
	return ChildKind{}, false
}

// upstreamCRDNames is the set of CRD names of ChildKinds.
func upstreamCRDNames() map[string]bool {
	names := map[string]bool{}
	for _, k := range ChildKinds {
		if k.CRD != "" {
			names[k.CRD] = true
		}
	}
	return names
}

// missingKinds returns the child kinds the API server does not serve. The manager's REST
// mapper discovers lazily and looks again on a miss, so a CRD installed after the operator
// started is found on the next reconcile.
func missingKinds(mapper meta.RESTMapper) ([]ChildKind, error) {
	var missing []ChildKind
	for _, k := range ChildKinds {
		if k.CRD == "" {
			continue
		}
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

// servedKinds returns the child kinds the API server serves, given the missing ones.
func servedKinds(missing []ChildKind) []schema.GroupVersionKind {
	absent := map[schema.GroupVersionKind]bool{}
	for _, k := range missing {
		absent[k.GVK] = true
	}
	var out []schema.GroupVersionKind
	for _, k := range ChildKinds {
		if !absent[k.GVK] {
			out = append(out, k.GVK)
		}
	}
	return out
}

// missingMessage says which operator to install for the missing kinds of one condition.
func missingMessage(missing []ChildKind, condition string) string {
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

func kindNames(kinds []ChildKind) []string {
	out := make([]string, len(kinds))
	for i, k := range kinds {
		out[i] = k.GVK.String()
	}
	return out
}
