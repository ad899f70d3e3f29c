package prometheus

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"regexp"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/internal/autoscale"
)

func TestCheckURL(t *testing.T) {
	open := DefaultAccess("10.96.0.1")
	only := open
	only.Allowed = []*regexp.Regexp{regexp.MustCompile(`^http://prometheus-operated\.monitoring(\.svc)?:9090/?$`)}
	for _, tc := range []struct {
		access Access
		url    string
		err    string
	}{
		{open, "http://prometheus-operated.monitoring:9090", ""},
		{open, "https://10.0.0.5:9090", ""},
		{open, "http://169.254.169.254/latest/meta-data", "address 169.254.169.254 is refused"},
		{open, "http://[fe80::1]:9090", "is refused"},
		{open, "http://[fd00:ec2::254]/", "is refused"},
		{open, "http://metadata.google.internal/computeMetadata/v1/", "host metadata.google.internal is refused"},
		{open, "https://kubernetes.default.svc.cluster.local/api", "is refused"},
		{open, "https://10.96.0.1:443/api", "address 10.96.0.1 is refused"},
		{open, "http://admin:secret@prometheus:9090", "credentials in the URL are refused"},
		{open, "ftp://prometheus:9090", "not an http(s) URL"},
		{only, "http://prometheus-operated.monitoring:9090", ""},
		{only, "http://prometheus.other-team:9090", "matches none of the URLs the operator allows"},
	} {
		err := tc.access.CheckURL(tc.url)
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("%s: %v", tc.url, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%s: %v, want %q", tc.url, err, tc.err)
		case err != nil && !strings.HasPrefix(err.Error(), "spec.autoscaling.prometheusURL: "):
			t.Errorf("%s: %v does not name the field", tc.url, err)
		}
	}
}

// TestDialRefusesDeniedAddressesAfterResolution: a name that resolves to a denied address is
// refused when connecting, not only a literal one.
func TestDialRefusesDeniedAddressesAfterResolution(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"status":"success","data":{"resultType":"vector","result":[]}}`))
	}))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(srv.URL, "http://"))
	a := DefaultAccess()
	a.DeniedPrefixes = append(a.DeniedPrefixes, netipPrefix(t, "127.0.0.0/8"))
	src, err := NewPrometheus("http://localhost:"+port, time.Minute, a)
	if err != nil {
		t.Fatal(err)
	}
	_, err = src.Read(context.Background(), map[autoscale.Signal]string{autoscale.IngestRate: "up"}, time.Now())
	var re *ReadError
	if !errors.As(err, &re) || re.Status != "refused by the operator's access policy" {
		t.Errorf("reading through a name resolving to a denied address: %v", err)
	}
}

// TestBlackholedPrometheus: a Prometheus that accepts connections and never answers costs a
// reading the access policy's deadline, not the interval.
func TestBlackholedPrometheus(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			defer c.Close() // held open, never answered
		}
	}()
	a := DefaultAccess()
	a.QueryTimeout, a.Deadline = 200*time.Millisecond, 500*time.Millisecond
	src, err := NewPrometheus("http://"+l.Addr().String(), time.Minute, a)
	if err != nil {
		t.Fatal(err)
	}
	queries := map[autoscale.Signal]string{}
	for s, q := range DefaultQueries {
		queries[s] = q
	}
	start := time.Now()
	_, err = src.Read(context.Background(), queries, time.Now())
	took := time.Since(start)
	if err == nil || !strings.Contains(err.Error(), "is unreachable") {
		t.Errorf("a silent Prometheus: %v, want unreachable", err)
	}
	if took > 2*time.Second {
		t.Errorf("reading %d queries from a silent Prometheus took %s; the deadline is %s", len(queries), took, a.Deadline)
	}
}

func TestQueriesStayInTheNamespace(t *testing.T) {
	p := &v1alpha1.AnalyticsPipeline{ObjectMeta: metav1.ObjectMeta{Name: "sensors", Namespace: "team-a"},
		Spec: v1alpha1.AnalyticsPipelineSpec{Autoscaling: &v1alpha1.AutoscalingSpec{Enabled: true}}}
	if _, err := Queries(p); err != nil {
		t.Fatalf("the default queries: %v", err)
	}
	for _, tc := range []struct{ query, err string }{
		{`sum(kafka_consumergroup_lag{namespace="$namespace"})`, ""},
		{`sum(kafka_consumergroup_lag)`, `every selector must carry namespace="team-a"`},
		{`sum(kafka_consumergroup_lag{namespace=~".*"})`, `every selector must carry namespace="team-a"`},
		{`sum(kafka_consumergroup_lag{namespace="team-b"})`, `every selector must carry namespace="team-a"`},
		{`sum(rate(x{namespace="$namespace"}[5m])) / sum(rate(y[5m]))`, "and y does not"},
		{`sum(kafka_consumergroup_lag{namespace="$namespace"`, "is not valid PromQL"},
	} {
		q := p.DeepCopy()
		q.Spec.Autoscaling.Queries = &v1alpha1.AutoscalingQueries{ConsumerLag: tc.query}
		_, err := Queries(q)
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("%s: %v", tc.query, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%s: %v, want %q", tc.query, err, tc.err)
		case err != nil && !strings.HasPrefix(err.Error(), "spec.autoscaling.queries.consumerLag: "):
			t.Errorf("%s: %v does not name the field", tc.query, err)
		}
	}
}

func netipPrefix(t *testing.T, s string) netip.Prefix {
	t.Helper()
	p, err := netip.ParsePrefix(s)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
