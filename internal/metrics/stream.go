package metrics

import (
	"bufio"
	"compress/gzip"
	"io"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// A registry gathers a whole scrape before it encodes any of it (client_golang's
// Registry.Gather builds every series as a protobuf Metric, then promhttp writes them): at
// 1,000 pipelines some 50,000 series, 21 MB allocated and held until the scrape is written
// (BenchmarkGather), a quarter of the operator's live heap at the moment a scrape runs. Served
// through Handler, the Recorder's families are written as they are read instead, in the
// Prometheus text format, after what the registry serves; then the Recorder is not registered
// on that registry (a family must not be served twice).

// textContentType is the Prometheus text exposition format, version 0.0.4 (prometheus/common
// expfmt.FmtText), the one format in which two writers' families can follow each other.
const textContentType = "text/plain; version=0.0.4; charset=utf-8"

// Handler serves next (a registry's handler, as controller-runtime's metrics server builds it)
// in the text format, followed by the Recorder's families, on path; other paths go to next
// unchanged. A scrape that asks for gzip gets the whole answer gzipped.
func (r *Recorder) Handler(path string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.URL.Path != path {
			next.ServeHTTP(w, req)
			return
		}
		inner := req.Clone(req.Context())
		inner.Header.Set("Accept", textContentType)
		inner.Header.Del("Accept-Encoding")
		var out io.Writer = w
		if acceptsGzip(req.Header.Get("Accept-Encoding")) {
			w.Header().Set("Content-Encoding", "gzip")
			w.Header().Add("Vary", "Accept-Encoding")
			gz := gzipWriters.Get().(*gzip.Writer)
			gz.Reset(w)
			defer func() {
				_ = gz.Close()
				gzipWriters.Put(gz)
			}()
			out = gz
		}
		aw := &appendingWriter{ResponseWriter: w, out: out}
		next.ServeHTTP(aw, inner)
		if aw.status != 0 && aw.status != http.StatusOK {
			return // the registry's error, as promhttp wrote it
		}
		if aw.status == 0 {
			w.Header().Set("Content-Type", textContentType)
			aw.WriteHeader(http.StatusOK)
		}
		bw := bufio.NewWriterSize(out, 32<<10)
		if err := r.WriteText(bw); err == nil {
			_ = bw.Flush()
		}
	})
}

var gzipWriters = sync.Pool{New: func() any { return gzip.NewWriter(io.Discard) }}

// acceptsGzip says whether an Accept-Encoding header lists gzip (without q=0).
func acceptsGzip(header string) bool {
	for _, part := range strings.Split(header, ",") {
		coding, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.EqualFold(strings.TrimSpace(coding), "gzip") {
			return strings.ReplaceAll(strings.TrimSpace(params), " ", "") != "q=0"
		}
	}
	return false
}

// appendingWriter passes the registry's answer through to out and remembers its status, so
// that the Recorder's families follow it only when it succeeded.
type appendingWriter struct {
	http.ResponseWriter
	out    io.Writer
	status int
}

func (a *appendingWriter) WriteHeader(code int) {
	if a.status != 0 {
		return
	}
	a.status = code
	a.Header().Del("Content-Length") // more follows, and a gzipped length differs
	a.ResponseWriter.WriteHeader(code)
}

func (a *appendingWriter) Write(b []byte) (int, error) {
	if a.status == 0 {
		a.WriteHeader(http.StatusOK)
	}
	return a.out.Write(b)
}

// snapshot is what one pipeline published, as a scrape reads it: its samples (publish
// replaces the slice, never changes it) and its observed values, copied.
type snapshot struct {
	key      pipelineKey
	samples  []sample
	observed map[string]float64
}

// WriteText writes every family the Recorder holds in the Prometheus text format (0.0.4): the
// series a registry it is registered on would serve, but written as they are read. The
// Recorder's lock is held only while the pipelines' samples are listed, not while writing to
// a scraper, which may be slow.
func (r *Recorder) WriteText(w *bufio.Writer) error {
	r.mu.RLock()
	snaps := make([]snapshot, 0, len(r.pipelines))
	for key, rec := range r.pipelines {
		s := snapshot{key: key, samples: rec.samples}
		if len(rec.observed) > 0 {
			s.observed = make(map[string]float64, len(rec.observed))
			for k, v := range rec.observed {
				s.observed[k] = v
			}
		}
		snaps = append(snaps, s)
	}
	r.mu.RUnlock()
	slices.SortFunc(snaps, func(a, b snapshot) int {
		if c := strings.Compare(a.key.namespace, b.key.namespace); c != 0 {
			return c
		}
		return strings.Compare(a.key.name, b.key.name)
	})
	buf := make([]byte, 0, 256)
	for _, c := range r.collectors {
		header := false
		emit := func(key pipelineKey, labels []string, v float64) {
			if !header {
				buf = append(buf[:0], "# HELP "...)
				buf = append(buf, c.d.Name...)
				buf = append(buf, ' ')
				buf = appendEscaped(buf, c.d.Help, false)
				buf = append(buf, "\n# TYPE "...)
				buf = append(buf, c.d.Name...)
				buf = append(buf, " gauge\n"...)
				_, _ = w.Write(buf)
				header = true
			}
			buf = append(buf[:0], c.d.Name...)
			buf = append(buf, '{')
			for i, j := range c.order {
				if i > 0 {
					buf = append(buf, ',')
				}
				buf = append(buf, *c.names[i]...)
				buf = append(buf, `="`...)
				switch j {
				case 0:
					buf = appendEscaped(buf, key.namespace, true)
				case 1:
					buf = appendEscaped(buf, key.name, true)
				default:
					buf = appendEscaped(buf, labels[j-2], true)
				}
				buf = append(buf, '"')
			}
			buf = append(buf, "} "...)
			buf = appendFloat(buf, v)
			buf = append(buf, '\n')
			_, _ = w.Write(buf)
		}
		for _, s := range snaps {
			if c.d.Observed {
				if v, ok := s.observed[c.d.Name]; ok {
					emit(s.key, nil, v)
				}
				continue
			}
			for _, sm := range s.samples {
				if sm.family == c.d.Name && len(sm.labels)+2 == len(c.order) {
					emit(s.key, sm.labels, sm.value)
				}
			}
		}
	}
	return w.Flush()
}

// appendEscaped escapes as the text format asks: a backslash and a newline in help texts and
// label values, a double quote in label values (prometheus/common expfmt/text_create.go).
func appendEscaped(buf []byte, s string, quote bool) []byte {
	for i := 0; i < len(s); i++ {
		switch ch := s[i]; {
		case ch == '\\':
			buf = append(buf, `\\`...)
		case ch == '\n':
			buf = append(buf, `\n`...)
		case ch == '"' && quote:
			buf = append(buf, `\"`...)
		default:
			buf = append(buf, ch)
		}
	}
	return buf
}

// appendFloat writes a sample value as expfmt does (writeFloat): NaN, +Inf, -Inf, else the
// shortest representation that reads back the same.
func appendFloat(buf []byte, f float64) []byte {
	switch {
	case math.IsNaN(f):
		return append(buf, "NaN"...)
	case math.IsInf(f, +1):
		return append(buf, "+Inf"...)
	case math.IsInf(f, -1):
		return append(buf, "-Inf"...)
	}
	return strconv.AppendFloat(buf, f, 'g', -1, 64)
}
