package prometheus

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/prometheus/common/config"
)

// Access is how the operator may reach Prometheus, set by whoever installs it (the manager's
// --prometheus-* flags, the chart's autoscaling.prometheus values), not by whoever writes a
// pipeline: a pipeline names a URL, and the operator — which runs with its own network identity
// and credentials — must not become a way to probe what that identity can reach.
type Access struct {
	// Allowed are the URLs a pipeline may name (each matched against the whole URL); none:
	// every http(s) URL that Denied does not refuse.
	Allowed []*regexp.Regexp
	// DeniedPrefixes are addresses never connected to, whatever a name resolves to: by default
	// link-local addresses (the cloud metadata services live there) and the API server's.
	DeniedPrefixes []netip.Prefix
	// BearerTokenFile and CAFile are read for every connection (a rotated Secret mounted as
	// files takes effect without a restart); empty: none.
	BearerTokenFile, CAFile string
	// QueryTimeout bounds each query; Deadline a whole reading of a pipeline.
	QueryTimeout, Deadline time.Duration
}

// DefaultAccess refuses link-local addresses and the metadata services on them, and apiServer
// (the API server's service addresses: the manager passes $KUBERNETES_SERVICE_HOST).
func DefaultAccess(apiServer ...string) Access {
	a := Access{
		DeniedPrefixes: []netip.Prefix{
			netip.MustParsePrefix("169.254.0.0/16"), // IPv4 link-local: AWS, GCP, Azure metadata
			netip.MustParsePrefix("fe80::/10"),      // IPv6 link-local
			netip.MustParsePrefix("fd00:ec2::254/128"),
			netip.MustParsePrefix("100.100.100.200/32"), // Alibaba Cloud metadata
		},
		QueryTimeout: 2 * time.Second,
		Deadline:     10 * time.Second,
	}
	for _, h := range apiServer {
		if ip, err := netip.ParseAddr(h); err == nil {
			a.DeniedPrefixes = append(a.DeniedPrefixes, netip.PrefixFrom(ip, ip.BitLen()))
		}
	}
	return a
}

// ErrURLRefused is returned for a URL the access policy refuses.
var ErrURLRefused = errors.New("refused by the operator's Prometheus access policy")

// deniedNames are host names refused whatever they resolve to.
var deniedNames = []string{"metadata.google.internal", "metadata", "kubernetes", "kubernetes.default",
	"kubernetes.default.svc"}

// CheckURL says whether a pipeline may name this Prometheus URL. The message names the field.
func (a Access) CheckURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("spec.autoscaling.prometheusURL: %q is not an http(s) URL", raw)
	}
	if u.User != nil {
		return fmt.Errorf("spec.autoscaling.prometheusURL: credentials in the URL are %w; "+
			"the operator's installer gives it Prometheus' credentials", ErrURLRefused)
	}
	host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	for _, n := range deniedNames {
		if host == n || strings.HasPrefix(host, "kubernetes.default.svc.") {
			return fmt.Errorf("spec.autoscaling.prometheusURL: host %s is %w", host, ErrURLRefused)
		}
	}
	if ip, err := netip.ParseAddr(host); err == nil && a.denied(ip) {
		return fmt.Errorf("spec.autoscaling.prometheusURL: address %s is %w", ip, ErrURLRefused)
	}
	if len(a.Allowed) == 0 {
		return nil
	}
	for _, re := range a.Allowed {
		if re.MatchString(raw) {
			return nil
		}
	}
	return fmt.Errorf("spec.autoscaling.prometheusURL: %q matches none of the URLs the operator allows (%w)", raw, ErrURLRefused)
}

func (a Access) denied(ip netip.Addr) bool {
	ip = ip.Unmap()
	for _, p := range a.DeniedPrefixes {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

// client returns the HTTP client Prometheus is read with: the policy's credentials and CA, and a
// dialer that refuses denied addresses after name resolution, so that a name pointing at one
// (or re-pointed at one later) is refused too.
func (a Access) client() (*http.Client, error) {
	cfg := config.DefaultHTTPClientConfig
	if a.BearerTokenFile != "" {
		cfg.Authorization = &config.Authorization{Type: "Bearer", CredentialsFile: a.BearerTokenFile}
	}
	cfg.TLSConfig.CAFile = a.CAFile
	dialer := &net.Dialer{Timeout: a.QueryTimeout}
	dial := func(ctx context.Context, network, address string) (net.Conn, error) {
		host, port, err := net.SplitHostPort(address)
		if err != nil {
			return nil, err
		}
		addrs, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		if err != nil {
			return nil, err
		}
		for _, ip := range addrs {
			if a.denied(ip) {
				return nil, fmt.Errorf("%s: address %w", host, ErrURLRefused)
			}
		}
		return dialer.DialContext(ctx, network, net.JoinHostPort(addrs[0].Unmap().String(), port))
	}
	return config.NewClientFromConfig(cfg, "strata-autoscaler", config.WithDialContextFunc(dial))
}
