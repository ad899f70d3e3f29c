// Package controllers sets Strata's three controllers up with a manager: Setup builds the
// pipeline controller (controllers/pipeline), the autoscaling controller
// (controllers/autoscaling) and the storage tier controller (controllers/tier), shares one
// server-side-apply path between them, and wires the autoscaling controller to what it reads
// through the pipeline controller's caches; ManagerOptions is what their caches need of the
// manager. Each controller's package reconciles in the same shape: a scope (what one reconcile
// reads and computes), a table of steps that fill it in, and the status written once on every
// exit, only when it changed, so that a reconcile with unchanged inputs writes nothing.
// Upstream operators (Strimzi, the Spark operator, ECK) may be missing or installed late: the
// reconcilers report that in conditions and carry on, instead of failing the manager.
package controllers
