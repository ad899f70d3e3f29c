// Package alerts is the one source of Strata's alert rules. From the definitions below it writes
// the same rules as Prometheus rule groups (what `promtool test rules` reads), as a Prometheus
// Operator PrometheusRule, and as Grafana-managed alert rules in Grafana's provisioning format,
// so the three cannot drift apart. `make observability` (hack/gen-observability) writes the files.
//
// The rules follow kubernetes-mixin's conventions: UpperCamelCase names starting with Strata, a
// severity label (warning: look at it in working hours; critical: act now), summary, description
// and runbook_url annotations, and a for: long enough that a single noisy scrape never fires.
// Every alert has a runbook in docs/runbooks/<Name>.md and promtool tests in
// config/prometheus/tests/, firing and not firing.
package alerts
