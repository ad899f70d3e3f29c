package prometheus

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/strata-dev/strata/internal/autoscale"
)

// A Prometheus HTTP API that answers each query with the JSON given for it.
func fakePrometheus(t *testing.T, answers map[string]string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseForm(); err != nil {
			t.Error(err)
		}
		if got := r.Form.Get("lookback_delta"); got != "1m0s" {
			t.Errorf("lookback_delta %q, want 1m0s", got)
		}
		body, ok := answers[r.Form.Get("query")]
		if !ok {
			body = `{"status":"success","data":{"resultType":"vector","result":[]}}`
		}
		if strings.Contains(body, `"status":"error"`) {
			w.WriteHeader(http.StatusBadRequest)
		}
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestPrometheusRead(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	srv := fakePrometheus(t, map[string]string{
		"tx": `{"status":"success","data":{"resultType":"vector","result":[` +
			`{"metric":{"pod":"a"},"value":[1700000000,"100"]},{"metric":{"pod":"b"},"value":[1700000000,"150"]}]}}`,
		"bad": `{"status":"error","errorType":"bad_data","error":"parse error"}`,
		"nan": `{"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[1700000000,"NaN"]}]}}`,
	})
	src, err := NewPrometheus(srv.URL, 30*time.Second*2, DefaultAccess())
	if err != nil {
		t.Fatal(err)
	}
	obs, err := src.Read(context.Background(), map[autoscale.Signal]string{
		autoscale.BrokerTransmitBytes: "tx", autoscale.ConsumerLag: "bad", autoscale.IngestRate: "nan", autoscale.ProcessingRate: "empty"}, now)
	if err != nil {
		t.Fatal(err)
	}
	if s := obs.Samples[autoscale.BrokerTransmitBytes]; s.Value != 250 || !s.Time.Equal(now) {
		t.Errorf("transmit: %+v, want the sum 250 at %s", s, now)
	}
	for _, s := range []autoscale.Signal{autoscale.ConsumerLag, autoscale.IngestRate, autoscale.ProcessingRate} {
		if _, ok := obs.Samples[s]; ok {
			t.Errorf("%s has a sample", s)
		}
	}
	// The problem says what kind of error, never what Prometheus answered.
	if got := obs.Problems[autoscale.ConsumerLag]; got != "Prometheus rejected the query (bad_data)" {
		t.Errorf("problem of the rejected query: %q", got)
	}

	srv.Close()
	_, err = src.Read(context.Background(), map[autoscale.Signal]string{autoscale.BrokerTransmitBytes: "tx"}, now)
	if want := "Prometheus at " + srv.URL + " is unreachable"; err == nil || err.Error() != want {
		t.Errorf("an unreachable Prometheus: %v, want %q (no dial error: the operator is no port scanner)", err, want)
	}
}
