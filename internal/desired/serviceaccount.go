package desired

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/strata-dev/strata/api/v1alpha1"
)

// ServiceAccountGVK is the kind of the Spark driver's ServiceAccount.
var ServiceAccountGVK = schema.GroupVersionKind{Version: "v1", Kind: "ServiceAccount"}

// ComponentSparkDriver is the LabelComponent of the driver's ServiceAccount and RoleBinding.
const ComponentSparkDriver = "spark-driver"

// SparkServiceAccountName is the name of the ServiceAccount the operator makes for p's driver.
func SparkServiceAccountName(p *v1alpha1.AnalyticsPipeline) string { return p.Name + "-spark" }

// OwnsDriverServiceAccount says whether the operator makes the driver's ServiceAccount and
// RoleBinding: unless spec.spark.serviceAccountName names one of the user's (which the
// operator's installation must allow: the controller refuses the spec otherwise).
func OwnsDriverServiceAccount(p *v1alpha1.AnalyticsPipeline) bool {
	return p.Spec.Spark.ServiceAccountName == ""
}

// DriverServiceAccount is the ServiceAccount the SparkApplication's driver runs as.
func DriverServiceAccount(p *v1alpha1.AnalyticsPipeline) string {
	if !OwnsDriverServiceAccount(p) {
		return p.Spec.Spark.ServiceAccountName
	}
	return SparkServiceAccountName(p)
}

// ServiceAccount builds the ServiceAccount (v1) of p's Spark driver, or nil when the spec names
// its own. The driver needs one that may create its executor pods, their claims, a headless
// service and a ConfigMap (SparkDriverRoleBinding grants that); without any the driver runs as
// the namespace's "default" account and cannot start a single executor.
//
// Its token is mounted only into pods that use it (the driver): the executors run as the
// namespace's default account, with no rights of the driver's.
func ServiceAccount(in Inputs) *unstructured.Unstructured {
	p := in.Pipeline
	if !OwnsDriverServiceAccount(p) {
		return nil
	}
	return newObject(ServiceAccountGVK, p, SparkServiceAccountName(p), AppSpark, ComponentSparkDriver, nil, nil, object{})
}
