package controllers

// Permissions the operator needs beside those of each controller's markers.
//
// Every child carries an owner reference to its pipeline with blockOwnerDeletion: true (the
// garbage collector then waits for children before a foreground deletion completes). Setting
// blockOwnerDeletion needs update on the owner's finalizers subresource when the API server runs
// the OwnerReferencesPermissionEnforcement admission plugin (on by default in OpenShift):
// kubernetes v1.36, plugin/pkg/admission/gc/gc_admission.go checks "update" on
// "<resource>/finalizers" of the owner for every reference that blocks its deletion. Without it
// every apply would be refused there.
// +kubebuilder:rbac:groups=strata.dev,resources=analyticspipelines/finalizers,verbs=update

// Each pipeline's Spark driver runs as a ServiceAccount of its own, bound in the pipeline's
// namespace to the ClusterRole the Helm chart ships (desired.SparkDriverClusterRole). Creating a
// RoleBinding to a role needs either every permission of the role or "bind" on it (kubernetes
// v1.36, pkg/registry/rbac/rolebinding/policybased/storage.go, and the "bind" verb in
// https://kubernetes.io/docs/reference/access-authn-authz/rbac/#restrictions-on-role-binding-creation-or-update):
// the operator holds only "bind", on that one ClusterRole by name, so it can grant a driver
// exactly those rules and nothing else, and cannot use them itself.
// +kubebuilder:rbac:groups=rbac.authorization.k8s.io,resources=clusterroles,verbs=bind,resourceNames=strata-spark-driver
