// Package plan turns an AnalyticsPipeline and the StorageTiers it names into a Plan: how many
// Kafka brokers, partitions, Spark executors, Elasticsearch data nodes and shards the pipeline
// needs, how each executor's memory budget is split, where each kind of data lives and what it
// costs, what every stage can carry and which one limits the pipeline.
//
// The package is pure — no Kubernetes client, no clock, no environment, no I/O — so that the
// operator, the `strata plan` CLI and the tests all get the same answer from the same input, and
// so that the planning rules can be tested exhaustively without a cluster. Everything the
// operator applies or reports about sizing comes from Compute.
//
// The models come from measurements (see docs/planning.md and docs/studies.md): Kafka brokers are
// usually limited by their network link, so brokers are sized from a per-broker traffic model; the
// page cache an executor's shuffle files use is charged to its pod, so it is carved out of the
// executor's memory budget; shuffle data files and spill files want different tiers, so each
// kind of data is placed and priced separately.
//
// Arithmetic is exact (math/big) wherever user-supplied quantities meet: link speeds, tier
// bandwidths, sizes and prices are resource.Quantity values or decimal strings with no upper
// bound, and a plan that silently overflowed or rounded money through a float would be wrong in
// ways nobody would notice. Counts and rates are bounded by the API's validation, which Compute
// re-checks so that garbage input yields a FieldError instead of a panic.
package plan
