// Package v1alpha1 is Strata's API: the two custom resources, their admission validation as
// OpenAPI bounds and CEL rules, printer columns, and the typed plan the operator writes into
// status. Field names here are fixed: samples, docs and scripts rely on them. The doc comments
// are the reference users read (`kubectl explain`, docs/reference/api.md generated from them).
package v1alpha1
