// Package pipeline is the AnalyticsPipeline controller. Its Reconcile reads like a table of
// contents (pipeline_steps.go): load the pipeline and its scope, read the tiers it names and
// the children as the cache has them, plan (internal/plan, pure), build the desired children
// (internal/desired, pure), apply them with one field owner, remove what the plan no longer
// wants, report the children's conditions, and write the status once on every exit, only when
// it changed. It also answers what the autoscaling controller asks of the cluster (Cluster in
// controllers/autoscaling: TierList, Policy), from the same caches.
package pipeline
