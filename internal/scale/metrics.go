package scale

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Scraper reads the operator's metrics endpoint. The benchmark serves it over plain HTTP
// (--metrics-secure=false): a secure endpoint creates a TokenReview and a SubjectAccessReview
// for each scrape (controller-runtime's filters.WithAuthenticationAndAuthorization), which would
// count as the operator's writes.
type Scraper struct {
	URL string
}

// Scrape returns the endpoint's samples in the Prometheus text format.
func (s Scraper) Scrape() (string, error) {
	c := &http.Client{Timeout: time.Minute}
	resp, err := c.Get(s.URL)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("GET %s: %s", s.URL, resp.Status)
	}
	return string(body), err
}

// writeMethods are the HTTP methods of API writes (create, update, patch and apply, delete).
var writeMethods = []string{"POST", "PUT", "PATCH", "DELETE"}

// Writes sums the client's requests with a write method: rest_client_requests_total{method=...},
// which controller-runtime registers from client-go (pkg/metrics/client_go_adapter.go) and which
// counts every request the process sent, its event recorder's too.
func Writes(text string) float64 {
	var n float64
	for _, m := range writeMethods {
		n += Sum(text, "rest_client_requests_total", `method="`+m+`"`)
	}
	return n
}

// Sum adds the values of metric's samples whose labels contain every given `name="value"`.
func Sum(text, metric string, labels ...string) float64 {
	var n float64
	s := bufio.NewScanner(strings.NewReader(text))
	s.Buffer(make([]byte, 1<<20), 1<<20)
	for s.Scan() {
		line := s.Text()
		rest, ok := strings.CutPrefix(line, metric)
		if !ok || (rest != "" && rest[0] != '{' && rest[0] != ' ') {
			continue
		}
		series, value, ok := cutValue(rest)
		if !ok || !hasAll(series, labels) {
			continue
		}
		n += value
	}
	return n
}

// cutValue splits `{labels} value` (or ` value`) into the label set and the value.
func cutValue(rest string) (string, float64, bool) {
	i := strings.LastIndexByte(rest, ' ')
	if i < 0 {
		return "", 0, false
	}
	v, err := strconv.ParseFloat(rest[i+1:], 64)
	if err != nil {
		return "", 0, false
	}
	return rest[:i], v, true
}

func hasAll(series string, labels []string) bool {
	for _, l := range labels {
		if !strings.Contains(series, l) {
			return false
		}
	}
	return true
}

// writeLines are the text's rest_client_requests_total samples of write methods, to tell what a
// process wrote.
func writeLines(text string) string {
	var out []string
	for _, line := range strings.Split(text, "\n") {
		if !strings.HasPrefix(line, "rest_client_requests_total{") {
			continue
		}
		for _, m := range writeMethods {
			if strings.Contains(line, `method="`+m+`"`) {
				out = append(out, line)
			}
		}
	}
	return strings.Join(out, "\n")
}

// ServerWrites are the API server's counts of write requests (apiserver_request_total) by
// "VERB resource[/subresource]", from its /metrics text: the breakdown the operator's own client
// metrics lack. They count every client's writes: the benchmark subtracts its own.
func ServerWrites(text string) map[string]float64 {
	out := map[string]float64{}
	s := bufio.NewScanner(strings.NewReader(text))
	s.Buffer(make([]byte, 1<<20), 1<<20)
	for s.Scan() {
		rest, ok := strings.CutPrefix(s.Text(), "apiserver_request_total{")
		if !ok {
			continue
		}
		series, value, ok := cutValue(rest)
		if !ok {
			continue
		}
		verb, resource, sub := label(series, "verb"), label(series, "resource"), label(series, "subresource")
		if !slices.Contains([]string{"POST", "PUT", "PATCH", "DELETE", "APPLY"}, verb) || resource == "" {
			continue
		}
		key := verb + " " + resource
		if sub != "" {
			key += "/" + sub
		}
		out[key] += value
	}
	return out
}

// label is the value of name in a `{a="x",b="y"}` label set, "" where absent. Label values
// here (verbs, resources, codes) hold no quotes or commas.
func label(series, name string) string {
	for _, pair := range strings.Split(strings.Trim(series, "{}"), ",") {
		if v, ok := strings.CutPrefix(pair, name+`="`); ok {
			return strings.TrimSuffix(v, `"`)
		}
	}
	return ""
}
