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
