package desired

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// RoleBindingGVK is the kind of the Spark driver's RoleBinding.
var RoleBindingGVK = schema.GroupVersionKind{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "RoleBinding"}

// SparkDriverClusterRole is the ClusterRole the Helm chart ships with exactly what a Spark
// driver needs in its namespace: the rules of the Spark operator's own spark Role (pods,
// configmaps, persistentvolumeclaims and services: get, list, watch, create, update, patch,
// delete, deletecollection; kubeflow/spark-operator v2.5.2,
// charts/spark-operator-chart/templates/spark/rbac.yaml). The operator holds only "bind" on it,
// by this name (controllers/rbac.go), not the permissions themselves: binding it is all the
// operator can do with them.
const SparkDriverClusterRole = "strata-spark-driver"

// RoleBinding builds the RoleBinding (rbac.authorization.k8s.io/v1) that grants p's driver
// ServiceAccount the SparkDriverClusterRole in the pipeline's namespace only, or nil when the
// spec names its own ServiceAccount. Its roleRef never changes (the API server refuses that).
func RoleBinding(in Inputs) *unstructured.Unstructured {
	p := in.Pipeline
	if !OwnsDriverServiceAccount(p) {
		return nil
	}
	return newObject(RoleBindingGVK, p, SparkServiceAccountName(p), AppSpark, ComponentSparkDriver, nil, nil, object{
		"roleRef": object{
			"apiGroup": "rbac.authorization.k8s.io",
			"kind":     "ClusterRole",
			"name":     SparkDriverClusterRole,
		},
		"subjects": []any{object{
			"kind":      "ServiceAccount",
			"name":      SparkServiceAccountName(p),
			"namespace": p.Namespace,
		}},
	})
}
