package metrics

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// recorderWithPipelines is a Recorder registered on reg holding three planned pipelines, one
// with a label value the text format must escape, and the autoscaler's observed values for one.
func recorderWithPipelines(t *testing.T, reg *prometheus.Registry) *Recorder {
	t.Helper()
	r := New(reg)
	r.Observe(pipeline("ns", "b"))
	r.Observe(pipeline("ns", "a"))
	odd := pipeline("other", "c")
	odd.Status.Conditions[1].Reason = `Back\slash "quoted"` + "\nnewline"
	r.Observe(odd)
	if err := r.SetObserved(BrokerLinkUtilization, "ns", "a", 0.93); err != nil {
		t.Fatal(err)
	}
	return r
}

// parsed is every series of a text exposition, formatted as series formats a registry's.
func parsed(t *testing.T, text []byte) []string {
	t.Helper()
	p := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := p.TextToMetricFamilies(bytes.NewReader(text))
	if err != nil {
		t.Fatalf("the text does not parse: %v\n%s", err, text)
	}
	var out []string
	for name, mf := range mfs {
		if mf.GetType() != dto.MetricType_GAUGE && strings.HasPrefix(name, "strata_pipeline") {
			t.Errorf("%s is a %s, want a gauge", name, mf.GetType())
		}
		for _, m := range mf.GetMetric() {
			out = append(out, format(name, m))
		}
	}
	sort.Strings(out)
	return out
}

// TestWriteTextServesWhatTheRegistryWould: the streamed text holds exactly the series, labels
// and values the registry gathers from the same Recorder, escaped label values included.
func TestWriteTextServesWhatTheRegistryWould(t *testing.T) {
	reg := prometheus.NewRegistry()
	r := recorderWithPipelines(t, reg)
	var b bytes.Buffer
	if err := r.WriteText(bufio.NewWriter(&b)); err != nil {
		t.Fatal(err)
	}
	got, want := parsed(t, b.Bytes()), series(t, reg)
	if len(want) < 100 {
		t.Fatalf("the registry gathers only %d series: the fixture plans too little", len(want))
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("streamed %d series, the registry %d; first difference:\n%s", len(got), len(want), firstDifference(got, want))
	}
}

func firstDifference(got, want []string) string {
	for i := range min(len(got), len(want)) {
		if got[i] != want[i] {
			return "got  " + got[i] + "\nwant " + want[i]
		}
	}
	return "one list is a prefix of the other"
}

// TestHandlerAppendsToTheRegistry: the endpoint serves the registry's families and then the
// Recorder's, plain or gzipped as asked; a failing registry's error is served alone; other
// paths are the registry's handler's.
func TestHandlerAppendsToTheRegistry(t *testing.T) {
	reg := prometheus.NewRegistry()
	served := prometheus.NewCounter(prometheus.CounterOpts{Name: "controller_runtime_like_total", Help: "A registry's own."})
	reg.MustRegister(served)
	served.Inc()
	r := recorderWithPipelines(t, prometheus.NewRegistry())
	h := r.Handler("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.HTTPErrorOnError}))

	var want []string
	var all bytes.Buffer
	if err := r.WriteText(bufio.NewWriter(&all)); err != nil {
		t.Fatal(err)
	}
	want = append(parsed(t, all.Bytes()), "controller_runtime_like_total{} 1")
	sort.Strings(want)

	for _, gz := range []bool{false, true} {
		req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
		req.Header.Set("Accept", "application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited;q=0.7,text/plain;version=0.0.4;q=0.3")
		if gz {
			req.Header.Set("Accept-Encoding", "gzip")
		}
		rr := httptest.NewRecorder()
		h.ServeHTTP(rr, req)
		if rr.Code != http.StatusOK {
			t.Fatalf("gzip %v: status %d: %s", gz, rr.Code, rr.Body)
		}
		if ct := rr.Header().Get("Content-Type"); !strings.HasPrefix(ct, "text/plain; version=0.0.4") {
			t.Errorf("gzip %v: Content-Type %q, want the text format", gz, ct)
		}
		body := rr.Body.Bytes()
		if gz {
			if rr.Header().Get("Content-Encoding") != "gzip" {
				t.Fatalf("asked for gzip, Content-Encoding %q", rr.Header().Get("Content-Encoding"))
			}
			zr, err := gzip.NewReader(bytes.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			if body, err = io.ReadAll(zr); err != nil {
				t.Fatal(err)
			}
		}
		if got := parsed(t, body); strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("gzip %v: served %d series, want %d; first difference:\n%s", gz, len(got), len(want), firstDifference(got, want))
		}
	}

	failing := prometheus.NewRegistry()
	failing.MustRegister(brokenCollector{})
	h = r.Handler("/metrics", promhttp.HandlerFor(failing, promhttp.HandlerOpts{ErrorHandling: promhttp.HTTPErrorOnError}))
	rr := httptest.NewRecorder()
	h.ServeHTTP(rr, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if rr.Code != http.StatusInternalServerError || strings.Contains(rr.Body.String(), Info) {
		t.Errorf("a failing registry: status %d, body %q; want 500 and no pipeline series", rr.Code, rr.Body.String())
	}

	other := r.Handler("/metrics", http.NotFoundHandler())
	rr = httptest.NewRecorder()
	other.ServeHTTP(rr, httptest.NewRequest(http.MethodGet, "/debug", nil))
	if rr.Code != http.StatusNotFound || strings.Contains(rr.Body.String(), Info) {
		t.Errorf("another path: status %d, body %q; want the next handler's 404 alone", rr.Code, rr.Body.String())
	}
}

// brokenCollector fails every collection, as a registry with a broken collector does.
type brokenCollector struct{}

var brokenDesc = prometheus.NewDesc("broken", "Fails.", nil, nil)

func (brokenCollector) Describe(ch chan<- *prometheus.Desc) { ch <- brokenDesc }
func (brokenCollector) Collect(ch chan<- prometheus.Metric) {
	ch <- prometheus.NewInvalidMetric(brokenDesc, io.ErrUnexpectedEOF)
}

func TestAcceptsGzip(t *testing.T) {
	for header, want := range map[string]bool{
		"": false, "gzip": true, "deflate, gzip;q=1.0, *;q=0.5": true, "GZIP": true, "gzip;q=0": false, "identity": false,
	} {
		if got := acceptsGzip(header); got != want {
			t.Errorf("acceptsGzip(%q) = %v, want %v", header, got, want)
		}
	}
}

// BenchmarkWriteText is one scrape of 1,000 pipelines' series written as text, as the endpoint
// serves them (BenchmarkGather is the registry's way).
func BenchmarkWriteText(b *testing.B) {
	r := NewUnregistered()
	for i := range 1000 {
		r.Observe(pipeline("ns", "p"+strconv.Itoa(i)))
	}
	w := bufio.NewWriter(io.Discard)
	b.ReportAllocs()
	for b.Loop() {
		if err := r.WriteText(w); err != nil {
			b.Fatal(err)
		}
	}
}
