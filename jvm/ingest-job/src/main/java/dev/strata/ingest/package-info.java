/**
 * Strata's ingestion job: the pipeline's Kafka topic into Elasticsearch with Spark Structured
 * Streaming. {@link dev.strata.ingest.IngestConf} is the job's configuration (only spark.strata.*
 * keys, set by the operator), {@link dev.strata.ingest.RecordConverter} what each record becomes
 * (a document with a deterministic id, or a dead letter with its reason). docs/ingest-job.md.
 */
package dev.strata.ingest;
