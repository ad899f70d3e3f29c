package dashboards

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// TestDashboards builds every dashboard (the SDK validates each on Build) and checks what Grafana's
// sidecar and the users rely on: a stable uid equal to the file name, the data source and
// namespace/pipeline variables, and a PromQL query and the chosen data source on every panel.
func TestDashboards(t *testing.T) {
	boards, err := All()
	if err != nil {
		t.Fatal(err)
	}
	if len(boards) != 2 {
		t.Fatalf("dashboards %d, want the pipeline's and the operator's", len(boards))
	}
	for name, b := range boards {
		var d struct {
			UID        string `json:"uid"`
			Title      string `json:"title"`
			Templating struct {
				List []struct {
					Name string `json:"name"`
				} `json:"list"`
			} `json:"templating"`
			Panels []struct {
				Type       string `json:"type"`
				Title      string `json:"title"`
				Datasource *struct {
					UID string `json:"uid"`
				} `json:"datasource"`
				Targets []struct {
					Expr string `json:"expr"`
				} `json:"targets"`
			} `json:"panels"`
		}
		if err := json.Unmarshal(b, &d); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if d.UID != name || !strings.HasPrefix(d.Title, "Strata / ") {
			t.Errorf("%s: uid %q, title %q", name, d.UID, d.Title)
		}
		vars := map[string]bool{}
		for _, v := range d.Templating.List {
			vars[v.Name] = true
		}
		for _, v := range []string{"datasource", "namespace", "pipeline"} {
			if !vars[v] {
				t.Errorf("%s: no %s variable", name, v)
			}
		}
		panels := 0
		for _, p := range d.Panels {
			if p.Type == "row" {
				continue
			}
			panels++
			if p.Datasource == nil || p.Datasource.UID != "${datasource}" {
				t.Errorf("%s, %s: data source %+v, want ${datasource}", name, p.Title, p.Datasource)
			}
			if len(p.Targets) == 0 {
				t.Errorf("%s, %s: no query", name, p.Title)
			}
			for _, tg := range p.Targets {
				if strings.TrimSpace(tg.Expr) == "" {
					t.Errorf("%s, %s: an empty query", name, p.Title)
				}
			}
		}
		if panels < 5 {
			t.Errorf("%s: %d panels", name, panels)
		}
	}
}

// TestPipelineDashboardCoversTheIssue: the pipeline dashboard shows what its users asked for.
func TestPipelineDashboardCoversTheIssue(t *testing.T) {
	b, err := All()
	if err != nil {
		t.Fatal(err)
	}
	text := string(b["strata-pipeline"])
	for _, want := range []string{
		"strata_pipeline_stage_capacity_messages_per_second", "strata_pipeline_bottleneck_info",
		"container_network_transmit_bytes_total", "kafka_consumergroup_lag", "container_memory_cache",
		"container_fs_reads_bytes_total", "metrics_executor_totalShuffleWrite_bytes_total",
		"strata_pipeline_storage_bytes", "strata_pipeline_storage_monthly_cost",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the pipeline dashboard does not show %s", want)
		}
	}
	text = string(b["strata-operator"])
	for _, want := range []string{
		"controller_runtime_reconcile_total", "controller_runtime_reconcile_errors_total",
		"controller_runtime_reconcile_time_seconds_bucket", "workqueue_depth", "strata_autoscaler_decisions_total",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the operator dashboard does not show %s", want)
		}
	}
}

// TestQueries: every panel's queries, each named once (the lab and the PromQL checks key on the
// names), none empty, from both dashboards.
func TestQueries(t *testing.T) {
	qs, err := Queries()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	perBoard := map[string]int{}
	for _, q := range qs {
		if strings.TrimSpace(q.Expr) == "" {
			t.Errorf("%s: empty", q.Name())
		}
		if seen[q.Name()] {
			t.Errorf("%s: named twice", q.Name())
		}
		seen[q.Name()] = true
		perBoard[q.Dashboard]++
		if q.Targets > 1 && !strings.HasSuffix(q.Name(), fmt.Sprintf(" #%d", q.Index+1)) {
			t.Errorf("%s: a panel of %d targets names target %d without its number", q.Name(), q.Targets, q.Index+1)
		}
	}
	if len(perBoard) != 2 || perBoard["strata-pipeline"] < 5 || perBoard["strata-operator"] < 3 {
		t.Errorf("queries per dashboard %v", perBoard)
	}
}
