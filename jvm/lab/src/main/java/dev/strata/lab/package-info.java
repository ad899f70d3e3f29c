/**
 * Strata's lab launcher: real Kafka nodes with the Prometheus JMX exporter's collector, and a
 * producer, as processes the Go tests of internal/lab start (docs/lab.md).
 */
package dev.strata.lab;
