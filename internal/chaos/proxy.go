package chaos

import (
	"bytes"
	"compress/gzip"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
)

// Proxy stands between one manager replica and the API server and records every write the
// replica makes, when it made it and, for its Lease, whom the write names as holder. Replicas
// share a ServiceAccount, a user agent and a field manager, so the API server's own records
// (managedFields, audit) cannot tell them apart; a proxy per replica can, on one clock (the
// test's) for every replica.
type Proxy struct {
	Replica string
	// URL is the proxy's address (https, loopback) and CA the certificate it serves, for the
	// replica's kubeconfig.
	URL string
	CA  []byte

	mu     sync.Mutex
	writes []Write
	errs   []string
}

// Write is one mutating request of a replica.
type Write struct {
	Replica string
	// At is when the request reached the proxy, Done when the API server's answer did.
	At, Done time.Time
	Method   string
	Path     string
	Status   int
	// Lease says the write was to a coordination.k8s.io Lease; Holder is the holderIdentity of
	// the Lease the API server answered with (the one the replica wrote, when it succeeded).
	Lease  bool
	Holder string
	// Event says the write was an Event (the leader election's "became leader", a reconciler's
	// report): informative, not a change to anything Strata manages.
	Event bool
}

// Succeeded says the API server accepted the write.
func (w Write) Succeeded() bool { return w.Status >= 200 && w.Status < 300 }

// Work says the write changes something Strata manages: neither its Lease nor an Event.
func (w Write) Work() bool { return !w.Lease && !w.Event }

// StartProxy starts a proxy to the API server of cfg for the replica named replica; it stops
// when the test ends. The replica's own credentials pass through: the proxy only adds TLS.
func StartProxy(t testing.TB, cfg *rest.Config, replica string) *Proxy {
	t.Helper()
	target, err := url.Parse(cfg.Host)
	if err != nil {
		t.Fatal(err)
	}
	tlsCfg, err := rest.TLSConfigFor(&rest.Config{TLSClientConfig: rest.TLSClientConfig{CAData: cfg.CAData}})
	if err != nil {
		t.Fatal(err)
	}
	p := &Proxy{Replica: replica}
	rp := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) { r.SetURL(target); r.Out.Host = target.Host },
		// Watches stream: every event goes on at once.
		FlushInterval: -1,
		Transport:     &http.Transport{TLSClientConfig: tlsCfg, MaxIdleConnsPerHost: 64, ForceAttemptHTTP2: true},
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			p.mu.Lock()
			p.errs = append(p.errs, fmt.Sprintf("%s %s: %v", r.Method, r.URL.Path, err))
			p.mu.Unlock()
			w.WriteHeader(http.StatusBadGateway)
		},
		ModifyResponse: func(resp *http.Response) error {
			if !isLease(resp.Request.URL.Path) || !mutating(resp.Request.Method) {
				return nil
			}
			// The holder the API server answered with: read whole (a Lease is small) and put back.
			b, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			resp.Body = io.NopCloser(bytes.NewReader(b))
			if err != nil {
				return err
			}
			if h := leaseHolder(b, resp.Header.Get("Content-Encoding")); h != "" {
				resp.Header.Set(holderHeader, h)
			}
			return nil
		},
	}
	// TLS towards the replica too: client-go sends no bearer token to a plain-HTTP server.
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !mutating(r.Method) {
			rp.ServeHTTP(w, r)
			return
		}
		rec := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		at := time.Now()
		rp.ServeHTTP(rec, r)
		p.add(Write{Replica: replica, At: at, Done: time.Now(), Method: r.Method, Path: r.URL.Path, Status: rec.status,
			Lease: isLease(r.URL.Path), Holder: rec.Header().Get(holderHeader), Event: isEvent(r.URL.Path)})
	}))
	srv.StartTLS()
	t.Cleanup(srv.Close)
	p.URL = srv.URL
	p.CA = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	return p
}

// holderHeader carries the Lease's holder from ModifyResponse to the handler that records the
// write (the replica sees it too, and ignores it).
const holderHeader = "X-Strata-Test-Lease-Holder"

func (p *Proxy) add(w Write) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.writes = append(p.writes, w)
}

// Errors are the requests the proxy could not pass on (the replica saw 502 Bad Gateway).
func (p *Proxy) Errors() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.errs...)
}

// Writes is a copy of what the replica wrote so far.
func (p *Proxy) Writes() []Write {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Write(nil), p.writes...)
}

// leaseHolder is the holderIdentity of the Lease in an answer's body, whichever encoding the
// replica asked for (controller-runtime's clients ask for protobuf for built-in kinds).
func leaseHolder(body []byte, encoding string) string {
	if encoding == "gzip" {
		zr, err := gzip.NewReader(bytes.NewReader(body))
		if err != nil {
			return ""
		}
		if body, err = io.ReadAll(zr); err != nil {
			return ""
		}
	}
	obj, _, err := scheme.Codecs.UniversalDeserializer().Decode(body, nil, nil)
	if err != nil {
		return ""
	}
	if l, ok := obj.(*coordinationv1.Lease); ok && l.Spec.HolderIdentity != nil {
		return *l.Spec.HolderIdentity
	}
	return ""
}

func mutating(method string) bool {
	switch method {
	case http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
		return true
	}
	return false
}

func isLease(path string) bool {
	return strings.HasPrefix(path, "/apis/coordination.k8s.io/") && strings.Contains(path, "/leases")
}

func isEvent(path string) bool {
	return strings.HasSuffix(path, "/events") || strings.Contains(path, "/events/")
}

// statusWriter keeps the status code a handler answered with; it passes Flush on, so that a
// watch streams through it.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (s *statusWriter) WriteHeader(code int) { s.status = code; s.ResponseWriter.WriteHeader(code) }

func (s *statusWriter) Flush() {
	if f, ok := s.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}
