// Package controllers holds Strata's reconcilers. Each one reads like a table of contents: get the
// object, plan (internal/plan, pure), build the desired children (internal/desired, pure), apply
// them with one field owner, remove what the plan no longer wants, and write status once — so
// that a reconcile with unchanged inputs writes nothing. Upstream operators (Strimzi, the Spark
// operator, ECK) may be missing or installed late: the reconcilers report that in conditions and
// carry on, instead of failing the manager.
package controllers
