// Package desired builds the child objects of an AnalyticsPipeline — the Strimzi Kafka cluster,
// its node pools, topic and rebalance template, the Spark operator's SparkApplication, the ECK
// Elasticsearch cluster, and the ConfigMaps they need — as pure functions of the pipeline and
// its plan.
//
// It exists so that the desired state can be golden-tested and diffed without a cluster: the
// builders take no client, read no clock and no environment, and the same (pipeline, plan)
// always yields equal objects, with map keys sorted when they are marshalled. The controller
// server-side applies what All returns, in that order; `strata plan` can print it.
//
// Third-party objects are *unstructured.Unstructured, built from map literals: this package
// does not import the Go types of Strimzi, the Spark operator or ECK (ECK's are under the
// Elastic License). Every field set here was checked against the upstream CRDs, and the tests
// server-side dry-run apply every object against those CRDs.
package desired
