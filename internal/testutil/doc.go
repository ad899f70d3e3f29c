// Package testutil holds what the tests of several packages share: the one way to wait for a
// condition (Eventually) and the fixtures of the API types (package gen below it). It is
// imported by tests only; nothing in the operator depends on it.
package testutil
