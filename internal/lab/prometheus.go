package lab

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/strata-dev/strata/internal/testutil"
)

// Prometheus is the lab's Prometheus server.
type Prometheus struct {
	URL  string
	proc *process
}

// StartPrometheus starts the pinned Prometheus ($STRATA_PROMETHEUS, else hack/tools.sh's build)
// with config (the Prometheus Operator's configuration as Rewrite changes it for the lab).
func StartPrometheus(t testing.TB, dir string, config []byte) *Prometheus {
	t.Helper()
	cfgFile := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfgFile, config, 0o600); err != nil {
		t.Fatal(err)
	}
	bin := testutil.Tool(t, "prometheus", "STRATA_PROMETHEUS")
	addr := testutil.FreePort(t)
	p := &Prometheus{URL: "http://" + addr}
	p.proc = start(t, dir, "prometheus", exec.Command(bin, "--config.file="+cfgFile,
		"--storage.tsdb.path="+filepath.Join(dir, "prometheus-data"), "--web.listen-address="+addr,
		"--storage.tsdb.retention.time=2h", "--log.level=warn"))
	if err := waitHTTP(http.DefaultClient, p.proc, p.URL+"/-/ready", time.Minute); err != nil {
		t.Fatal(err)
	}
	return p
}

// Result is one instant query's answer.
type Result struct {
	Series []Sample
	Err    error // the query's error (bad_data, execution), nil when it ran
	// Wait is what WaitFor saw before this answer (nil for Query's), so that a failure message
	// printing the Result says how long it waited and what the query answered meanwhile.
	Wait *Wait
}

// Sample is one series of an instant vector (or a scalar, without labels).
type Sample struct {
	Labels map[string]string
	Value  float64
}

// Query evaluates q now through the HTTP API (/api/v1/query), as the autoscaler and Grafana do.
func (p *Prometheus) Query(ctx context.Context, q string) Result {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.URL+"/api/v1/query?"+url.Values{"query": {q}}.Encode(), nil)
	if err != nil {
		return Result{Err: err}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return Result{Err: err}
	}
	defer resp.Body.Close()
	var body struct {
		Status    string `json:"status"`
		ErrorType string `json:"errorType"`
		Error     string `json:"error"`
		Data      struct {
			ResultType string          `json:"resultType"`
			Result     json.RawMessage `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return Result{Err: fmt.Errorf("HTTP %d: %w", resp.StatusCode, err)}
	}
	if body.Status != "success" {
		return Result{Err: fmt.Errorf("%s: %s", body.ErrorType, body.Error)}
	}
	switch body.Data.ResultType {
	case "vector":
		var v []struct {
			Metric map[string]string `json:"metric"`
			Value  [2]any            `json:"value"`
		}
		if err := json.Unmarshal(body.Data.Result, &v); err != nil {
			return Result{Err: err}
		}
		var out Result
		for _, s := range v {
			f, _ := strconv.ParseFloat(fmt.Sprint(s.Value[1]), 64)
			out.Series = append(out.Series, Sample{Labels: s.Metric, Value: f})
		}
		return out
	case "scalar":
		var s [2]any
		if err := json.Unmarshal(body.Data.Result, &s); err != nil {
			return Result{Err: err}
		}
		f, _ := strconv.ParseFloat(fmt.Sprint(s[1]), 64)
		return Result{Series: []Sample{{Value: f}}}
	default:
		return Result{Err: fmt.Errorf("result type %s", body.Data.ResultType)}
	}
}
