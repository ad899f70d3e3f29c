package lab

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/prometheus/common/model"

	"github.com/strata-dev/strata/internal/alerts"
	"github.com/strata-dev/strata/internal/autoscale"
	autoscaleprom "github.com/strata-dev/strata/internal/autoscale/prometheus"
	"github.com/strata-dev/strata/internal/desired"
)

// inLab says whether TestLab runs a source (Sources' names): every one but the kubelet's volume
// stats and cAdvisor's network series (the brokers share the machine's interfaces here; make
// lab's StartOnLinks checks them), and cAdvisor's container series only as root.
func (l *Lab) inLab(source string) bool {
	switch source {
	case "kubelet (volume stats)", "cAdvisor (network)":
		return false
	case "cAdvisor":
		return l.CAdvisor != nil
	}
	return true
}

// noDataExpected are queries whose sources all run in the lab but which have no data in a
// healthy lab, and why. Any other such query without data fails the test.
var noDataExpected = map[string]string{
	"alert/StrataPipelineBottleneck":                                        "the lab's plan has no bottleneck (strata_pipeline_bottleneck_info{stage!=\"None\"} is empty)",
	"alert/StrataAutoscalerAtMaximum":                                       "no bottleneck, and the autoscaler publishes strata_pipeline_broker_link_utilization_ratio from cAdvisor's network counters only (not in the lab)",
	"alert/StrataOperatorDown":                                              "absent(): data only while the operator is down (the operator-down scenario)",
	"dashboard/strata-operator / Autoscaler decisions by action and reason": noDecisions,
	"dashboard/strata-pipeline / Autoscaler decisions":                      noDecisions,
}

// The healthy lab's workload: 500 kB/s into Kafka in records the ingestion job, on a 2-core
// machine shared with the rest of the lab, indexes at a few times their rate, so that it keeps
// up with a margin; it catches up after each scenario at up to five times the rate (the
// pipeline's consumerMessagesPerSecond, which sizes its micro-batches).
const (
	labRecords        = 200
	labRecordBytes    = 2500
	labCatchUpRecords = 5 * labRecords
)

// labOptions are TestLab's.
func labOptions() Options {
	return Options{Brokers: 3, ReplicationFactor: 3, MessagesPerSecond: labRecords, MessageBytes: labRecordBytes,
		CatchUpMessagesPerSecond: labCatchUpRecords, ScrapeInterval: 10 * time.Second}
}

// noDecisions is why the autoscaler's decision panels are empty in a healthy lab.
const noDecisions = "the autoscaler reads but decides nothing: the lab pins the brokers (min = max) and the job keeps up with the load on the executors planned (strata_autoscaler_decisions_total)"

// knownBroken are queries that fail against the lab today, with the issue that fixes them. They
// are reported in the table, not failed; one that works again is logged so the entry is dropped.
var knownBroken = map[string]string{}

// silentExpected are the alerts pending or firing in a healthy lab, and why.
var silentExpected = map[string]string{
	// It fires only for a Ready pipeline, which the lab's is not before the Ready scenario (no
	// Strimzi, Spark operator or ECK reports its children).
	"StrataPipelineMetricsUnavailable": "the brokers' network series are not in TestLab (cAdvisor on shaped links is make lab's)",
}

func TestLab(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the lab starts Kafka and Prometheus")
	}
	began := time.Now()
	ctx := context.Background()
	l := Start(t, labOptions())
	t.Logf("lab started in %s", time.Since(began).Round(time.Second))
	prom := l.Prometheus

	// Every target up, and two rate windows of the producer's load.
	if r, ok := prom.WaitFor(ctx, `count(up == 1)`, 3*time.Minute, func(r Result) bool {
		return len(r.Series) == 1 && int(r.Series[0].Value) == l.targets()
	}); !ok {
		down := prom.Query(ctx, `up == 0`)
		t.Fatalf("count(up == 1): %v, want all %d targets up (down: %v)", r, l.targets(), down)
	}
	queries, err := autoscaleprom.Queries(l.Pipeline)
	if err != nil {
		t.Fatal(err)
	}
	if r, ok := prom.WaitFor(ctx, `sum(rate(kafka_server_brokertopicmetrics_bytesin_total{topic=""}[40s])) > 0`, 2*time.Minute,
		func(r Result) bool { return len(r.Series) == 1 }); !ok {
		t.Fatalf("no Kafka bytes in: %v", r)
	}
	t.Logf("load seen after %s", time.Since(began).Round(time.Second))
	// Every check below is of a job that keeps up. On a busy machine its JVMs take a while to
	// start, and the producer has run meanwhile: wait for its first commit, then until it has
	// caught up with the backlog it found, within what that backlog takes to drain.
	started, ok := l.WaitJobStarted(ctx, JobStartTimeout)
	if !ok {
		t.Fatalf("the job never committed its consumer group's offsets (running: %t, restarted %d times): %v",
			l.Job.Running(), l.Job.Restarts(), started)
	}
	t.Logf("the job committed first %s after the lab began: %v", time.Since(began).Round(time.Second), started)
	if r, ok := l.WaitCaughtUp(ctx, l.CatchUpTimeout(started.Series[0].Value)); !ok {
		t.Fatalf("the job never caught up with the producer (its lag under %g records, a micro-batch of the workload; running: %t, restarted %d times): %v",
			l.CaughtUpLag(), l.Job.Running(), l.Job.Restarts(), r)
	} else {
		t.Logf("the job caught up %s after the lab began: %v", time.Since(began).Round(time.Second), r)
	}

	t.Run("target labels as the Prometheus Operator gives them", func(t *testing.T) {
		broker := l.Kafka.Brokers[0]
		want := map[string]map[string]string{
			fmt.Sprintf(`up{pod=%q}`, broker.Pod): {"job": "monitoring/strata-kafka", "namespace": PipelineNamespace, "pod": broker.Pod,
				"container": "kafka", "endpoint": "tcp-prometheus", "strimzi_io_kind": "Kafka", "strimzi_io_cluster": "lab"},
			`up{job="strata-metrics"}`: {"job": "strata-metrics", "namespace": "strata-system", "service": "strata-metrics",
				"container": "manager", "endpoint": "https"},
			// honorLabels: the operator's series keep the pipeline's namespace.
			`strata_pipeline_info{job="strata-metrics"}`: {"namespace": PipelineNamespace, "pipeline": "lab"},
		}
		for q, labels := range want {
			r := prom.Query(ctx, q)
			if r.Err != nil || len(r.Series) != 1 {
				t.Errorf("%s: %v, want one series", q, r)
				continue
			}
			for k, v := range labels {
				if got := r.Series[0].Labels[k]; got != v {
					t.Errorf("%s: %s=%q, want %q (all: %v)", q, k, got, v, r.Series[0].Labels)
				}
			}
		}
	})

	t.Run("the Spark job: scraped, joined to the pipeline, indexing", func(t *testing.T) { sparkJob(t, ctx, l) })
	t.Run("every generated query", func(t *testing.T) { checkQueries(t, ctx, l) })

	t.Run("healthy lab: alerts silent", func(t *testing.T) {
		// The lab shortens every alert's for: to seconds (ShortenFor), so an alert shows its
		// condition as soon as it holds. StrataSparkProcessingBelowIngest compares the 5-minute
		// rates of the job's commits and of the topic: while the group's offsets span seconds
		// (the job has just caught up), that rate is a batch or two over a scrape interval and
		// dips under 90 % at random (pending beside a CPU hog). A healthy job is one whose
		// commits fill the alerts' rate window, as they do long before the alert's real for: of
		// 15 minutes has passed: when an alert is pending or firing before that, wait for it and
		// look again. Whatever is pending or firing then is a failure.
		unexpected := func() []Sample {
			r := prom.Query(ctx, `ALERTS`)
			if r.Err != nil {
				t.Fatal(r.Err)
			}
			var out []Sample
			for _, s := range r.Series {
				if why, ok := silentExpected[s.Labels["alertname"]]; ok {
					t.Logf("alert %s is %s, as expected (%s): %v", s.Labels["alertname"], s.Labels["alertstate"], why, s.Labels)
				} else {
					out = append(out, s)
				}
			}
			return out
		}
		alerting := unexpected()
		if len(alerting) > 0 {
			full := fmt.Sprintf(`min(count_over_time(kafka_consumergroup_current_offset{consumergroup=%q}[%s])) >= %d`,
				desired.ConsumerGroup(l.Pipeline), alerts.Window, l.windowSamples(t))
			r, ok := prom.WaitFor(ctx, full, 8*time.Minute, func(r Result) bool { return len(r.Series) == 1 })
			if !ok {
				t.Fatalf("%s: %v, want a full rate window of the job's commits", full, r)
			}
			if r.Wait.Polls > 1 {
				t.Logf("%d alerts pending or firing %s after the lab began, while the job's commits filled less than a rate window: waited %s for a full one",
					len(alerting), time.Since(began).Round(time.Second), r.Wait.For.Round(time.Second))
				alerting = unexpected()
			}
		}
		for _, s := range alerting {
			t.Errorf("alert %s is %s in a healthy lab: %v", s.Labels["alertname"], s.Labels["alertstate"], s.Labels)
		}
		urp, _ := prom.WaitFor(ctx, queries[autoscale.UnderReplicatedPartitions], time.Minute,
			func(r Result) bool { return r.Err != nil || len(r.Series) > 0 })
		if urp.Err != nil || len(urp.Series) != 1 || urp.Series[0].Value != 0 {
			t.Errorf("underReplicatedPartitions in a healthy lab: %v, want 0", urp)
		}
	})

	t.Run("paused job: ConsumerLagGrowing and SparkProcessingBelowIngest firing", func(t *testing.T) { consumerLag(t, ctx, l) })

	t.Run("saturated search node: ElasticsearchIndexingSaturated firing", func(t *testing.T) { indexingSaturated(t, ctx, l) })

	t.Run("stopped broker: under-replicated", func(t *testing.T) {
		q := queries[autoscale.UnderReplicatedPartitions]
		b := l.Kafka.Brokers[len(l.Kafka.Brokers)-1]
		stopped := time.Now()
		b.Stop()
		r, ok := prom.WaitFor(ctx, q, 2*time.Minute, func(r Result) bool { return len(r.Series) == 1 && r.Series[0].Value > 0 })
		if !ok {
			t.Fatalf("%s after stopping %s: %v, want > 0", q, b.Pod, r)
		}
		t.Logf("underReplicatedPartitions = %g %s after stopping %s", r.Series[0].Value, time.Since(stopped).Round(time.Second), b.Pod)
		// The alert fires under Prometheus' own rule evaluation for the pipeline's remaining
		// brokers (its for: shortened to the lab's, see ShortenFor).
		const alert = "StrataKafkaUnderReplicatedPartitions"
		if r, ok := l.WaitAlert(ctx, alert, "firing", 2*time.Minute); !ok {
			t.Fatalf("%s: %v, want firing", alert, r)
		} else if got := r.Series[0].Labels; got["namespace"] != "lab" || got["pipeline"] != "lab" {
			t.Errorf("%s fires for %v, want the lab's pipeline", alert, got)
		}
		t.Logf("%s firing %s after stopping %s", alert, time.Since(stopped).Round(time.Second), b.Pod)
	})

	t.Run("operator endpoint: TLS and authorization", func(t *testing.T) { operatorEndpoint(t, l) })
	t.Run("autoscaler reads the lab", func(t *testing.T) { autoscalerReads(t, ctx, l) })
	t.Run("invalid pipeline: StrataPipelinePlanInvalid firing", func(t *testing.T) { planInvalid(t, ctx, l) })

	t.Run("Ready pipeline without the brokers' network series: MetricsUnavailable firing", func(t *testing.T) { metricsUnavailable(t, ctx, l) })
	t.Run("overloaded pipeline: Bottleneck and AutoscalerAtMaximum firing", func(t *testing.T) { overloaded(t, ctx, l) })
	t.Run("operator without RBAC: StrataOperatorReconcileErrors firing", func(t *testing.T) { reconcileErrors(t, ctx, l) })

	t.Run("executor disk load: ExecutorPageCacheStarved and ExecutorHeavySpill firing", func(t *testing.T) { executorDisk(t, ctx, l) })

	t.Run("executors changed in place: the operator's target, the same driver", func(t *testing.T) { executorsInPlace(t, ctx, l) })

	t.Run("operator down: StrataOperatorDown firing", func(t *testing.T) {
		if r := prom.Query(ctx, `ALERTS{alertname="StrataOperatorDown"}`); r.Err != nil || len(r.Series) != 0 {
			t.Fatalf("before: %v", r)
		}
		stopped := time.Now()
		l.Operator.Stop()
		if r, ok := l.WaitAlert(ctx, "StrataOperatorDown", "firing", 2*time.Minute); !ok {
			t.Fatalf("StrataOperatorDown not firing two minutes after the metrics endpoint stopped: %v", r)
		}
		t.Logf("StrataOperatorDown firing %s after the metrics endpoint stopped", time.Since(stopped).Round(time.Second))
	})
	t.Logf("lab test took %s", time.Since(began).Round(time.Second))
}

// targets is the number of scrape targets the lab's processes are.
func (l *Lab) targets() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.pods)
}

func (l *Lab) scrapeInterval() time.Duration {
	return time.Duration(l.Pipeline.Spec.Autoscaling.IntervalSeconds) * time.Second
}

// windowSamples is how many samples a series holds once it spans the alerts' rate window
// (alerts.Window), one fewer for where the window's edges fall between scrapes.
func (l *Lab) windowSamples(t testing.TB) int {
	w, err := model.ParseDuration(alerts.Window)
	if err != nil {
		t.Fatal(err)
	}
	return int(time.Duration(w)/l.scrapeInterval()) - 1
}

type row struct {
	q       Query
	data    bool
	firing  bool
	reason  string
	missing []string
}

// checkQueries evaluates every generated query and prints the table.
func checkQueries(t *testing.T, ctx context.Context, l *Lab) {
	qs, err := Queries(l.Pipeline)
	if err != nil {
		t.Fatal(err)
	}
	gaps := l.cadvisorGaps(ctx)
	var rows []row
	for _, q := range qs {
		r := row{q: q}
		srcs, err := SourcesOf(q.Expr)
		if err != nil {
			t.Errorf("%s %s: %v", q.Kind, q.Name, err)
			continue
		}
		for _, s := range srcs {
			if !l.inLab(s) {
				r.missing = append(r.missing, s)
			}
		}
		expr := q.Expr
		if q.Kind == "alert" {
			res := l.Prometheus.Query(ctx, q.Expr)
			if res.Err != nil {
				t.Errorf("%s %s: %v\n%s", q.Kind, q.Name, res.Err, q.Expr)
			}
			r.firing = len(res.Series) > 0
			if expr, err = Operands(q.Expr); err != nil {
				t.Fatal(err)
			}
		}
		key := q.Kind + "/" + q.Name
		gap := seriesGap(q.Expr, gaps)
		res := l.Prometheus.Query(ctx, expr)
		if res.Err == nil && len(res.Series) == 0 && len(r.missing) == 0 && noDataExpected[key] == "" && gap == "" {
			// A scrape that timed out on a busy machine leaves a gap: give the series a minute.
			res, _ = l.Prometheus.WaitFor(ctx, expr, time.Minute, func(r Result) bool { return r.Err != nil || len(r.Series) > 0 })
		}
		switch {
		case res.Err != nil && knownBroken[key] != "":
			r.reason = "KNOWN BROKEN (" + knownBroken[key] + "): " + res.Err.Error()
		case res.Err != nil:
			t.Errorf("%s %s: %v\n%s", q.Kind, q.Name, res.Err, expr)
			r.reason = "error: " + res.Err.Error()
		case knownBroken[key] != "":
			t.Logf("%s %s works now: drop it from knownBroken", q.Kind, q.Name)
		}
		r.data = len(res.Series) > 0
		switch {
		case res.Err != nil:
		case r.data:
		case len(r.missing) > 0:
			r.reason = "not in the lab: " + strings.Join(r.missing, ", ")
		case noDataExpected[key] != "":
			r.reason = noDataExpected[key]
		case gap != "":
			r.reason = gap
		default:
			r.reason = "NO DATA although its sources run"
			t.Errorf("%s %s: no data although its sources (%s) run in the lab:\n%s", q.Kind, q.Name, strings.Join(srcs, ", "), expr)
		}
		rows = append(rows, r)
	}
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].q.Kind < rows[j].q.Kind })
	var b strings.Builder
	w := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "KIND\tQUERY\tDATA\tFIRING\tREASON (no data)")
	for _, r := range rows {
		firing := ""
		if r.q.Kind == "alert" {
			firing = yes(r.firing)
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", r.q.Kind, r.q.Name, yes(r.data), firing, r.reason)
	}
	w.Flush()
	t.Logf("every generated query against the lab (alerts: DATA = their operands with the comparisons made bool; FIRING = the expression as is):\n%s", b.String())
	if f := os.Getenv("STRATA_LAB_TABLE"); f != "" {
		_ = os.WriteFile(f, []byte(b.String()), 0o644)
	}
}

// optionalCAdvisorSeries are cAdvisor series that exist only where the kernel or cAdvisor's
// version provides them, and why they may be absent; the queries reading them treat them as
// optional (the autoscaler falls back, the alerts need them only for their own condition).
var optionalCAdvisorSeries = map[string]string{
	"container_memory_workingset_refault_file_total": "cAdvisor exports refaults from v0.60, on cgroup v2 (Kubernetes 1.37+); the lab's is v0.56.2, the kubelet's of Kubernetes 1.36",
	"container_fs_reads_bytes_total":                 diskGap,
	"container_fs_writes_bytes_total":                diskGap,
}

// diskGap is why cAdvisor may serve no disk series for the executors: it reads them from the
// cgroups' block I/O statistics, which count nothing where the lab's files are on no block
// device (tmpfs, overlayfs: the lab cannot make cgroup v1 count them, disk.go).
const diskGap = "cAdvisor serves per-device disk counters from the cgroups' block I/O statistics, which list no device here (the lab's files are on no block device)"

// cadvisorGaps are the optional cAdvisor series that the lab's cAdvisor does not serve for the
// job's executors, with the reason: a query that has no data only for lack of them is reported
// with it. A series that is served is no gap, and a query reading it must have data.
func (l *Lab) cadvisorGaps(ctx context.Context) map[string]string {
	gaps := map[string]string{}
	if l.CAdvisor == nil {
		return gaps
	}
	for metric, why := range optionalCAdvisorSeries {
		r := l.Prometheus.Query(ctx, fmt.Sprintf(`count(%s{container=%q})`, metric, desired.SparkExecutorContainer))
		if r.Err == nil && len(r.Series) == 0 {
			gaps[metric] = "not served here: " + why
		}
	}
	return gaps
}

// seriesGap is the reason a query reading a gap may have no data, or "".
func seriesGap(expr string, gaps map[string]string) string {
	names, err := MetricsOf(expr)
	if err != nil {
		return ""
	}
	var why []string
	for _, n := range names {
		if g, ok := gaps[n]; ok {
			why = append(why, n+" "+g)
		}
	}
	return strings.Join(why, "; ")
}

func yes(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
