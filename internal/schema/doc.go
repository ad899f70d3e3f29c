// Package schema admits Strata objects offline exactly as the API server would: it reads the
// CustomResourceDefinitions `make manifests` generates (embedded by config/crd), and runs the
// API server's own code for them — strict unknown-field detection, structural defaulting,
// OpenAPI validation, list-type checks and the CEL rules.
//
// It exists so that `strata plan -f pipeline.yaml` rejects, with the same message naming the
// same field, whatever `kubectl apply -f pipeline.yaml` would reject, and plans from the same
// defaults the API server would store. A hand-written copy of the validation would drift from
// the markers in api/v1alpha1; running the apiextensions-apiserver code on the generated CRDs
// cannot.
package schema
