// Package gen builds the API objects the tests of several packages start from, in the style of
// cert-manager's test/unit/gen: a documented base object and options that each change one
// thing, so that a test says only what it cares about ("the API example with two producers")
// instead of carrying its own 80-line literal that drifts from the others.
//
// The bases are docs/api.md's example pipeline and the samples' tiers; a test that needs a
// different value says so with an option.
package gen
