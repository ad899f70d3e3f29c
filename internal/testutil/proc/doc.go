// Package proc runs the programs the lab and the upstream harness start beside a test (brokers,
// exporters, Prometheus, the operator, the upstream controllers): each logs to a file the test
// prints when it fails, and dies with the test binary even when the binary is killed.
package proc
