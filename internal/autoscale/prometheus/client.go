package prometheus

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/prometheus/client_golang/api"
	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
	"golang.org/x/sync/errgroup"

	"github.com/strata-dev/strata/internal/autoscale"
)

// Prometheus reads signals from a Prometheus HTTP API with client_golang's API client, as the
// operator's access policy allows.
type Prometheus struct {
	api promv1.API
	url string
	// lookback bounds how old a raw sample may be and still count: Prometheus' default of five
	// minutes would let a gauge of a vanished pod stand in for a live one.
	lookback time.Duration
	access   Access
}

// NewPrometheus returns a source for the Prometheus at url, reached as access says. Samples
// older than lookback (the operator uses two intervals) are not returned.
func NewPrometheus(url string, lookback time.Duration, access Access) (*Prometheus, error) {
	if err := access.CheckURL(url); err != nil {
		return nil, err
	}
	hc, err := access.client()
	if err != nil {
		return nil, fmt.Errorf("the operator's Prometheus credentials: %w", err)
	}
	c, err := api.NewClient(api.Config{Address: url, Client: hc})
	if err != nil {
		return nil, fmt.Errorf("spec.autoscaling.prometheusURL: %w", err)
	}
	if access.QueryTimeout <= 0 {
		access.QueryTimeout = 2 * time.Second
	}
	if access.Deadline <= 0 {
		access.Deadline = 5 * access.QueryTimeout
	}
	return &Prometheus{api: promv1.NewAPI(c), url: url, lookback: lookback, access: access}, nil
}

// ReadError says why Prometheus could not be read, in terms that are safe to show whoever can
// read a pipeline's status: reachable or not, and the class of the answer — never a response
// body or a dial error, which would make the operator a probe of what its network reaches.
type ReadError struct {
	URL string
	// Status is "unreachable", "refused by the access policy", or the answer's class ("HTTP
	// 4xx", "HTTP 5xx", "an answer that is not Prometheus' API").
	Status string
}

func (e *ReadError) Error() string {
	if e.Status == "unreachable" {
		return fmt.Sprintf("Prometheus at %s is unreachable", e.URL)
	}
	return fmt.Sprintf("Prometheus at %s: %s", e.URL, e.Status)
}

// readError classifies an error of the API client.
func (p *Prometheus) readError(err error) *ReadError {
	var apiErr *promv1.Error
	switch {
	case errors.Is(err, ErrURLRefused):
		return &ReadError{URL: p.url, Status: "refused by the operator's access policy"}
	case errors.As(err, &apiErr) && apiErr.Type == promv1.ErrClient:
		return &ReadError{URL: p.url, Status: "reachable, answered HTTP 4xx"}
	case errors.As(err, &apiErr) && apiErr.Type == promv1.ErrServer:
		return &ReadError{URL: p.url, Status: "reachable, answered HTTP 5xx"}
	case errors.As(err, &apiErr) && apiErr.Type == promv1.ErrBadResponse:
		return &ReadError{URL: p.url, Status: "reachable, but the answer is not Prometheus' API"}
	}
	return &ReadError{URL: p.url, Status: "unreachable"}
}

// Read evaluates every query at now, a few at a time, each within the access policy's query
// timeout and all within its deadline, so that a slow or silent Prometheus costs a reading at
// most that long.
//
// A query Prometheus rejects (a metric whose type makes the function invalid, say) is noted as
// that signal's problem, by the error's type only; a Prometheus that cannot be read fails the
// whole reading with a *ReadError.
func (p *Prometheus) Read(ctx context.Context, queries map[autoscale.Signal]string, now time.Time) (autoscale.Observations, error) {
	ctx, cancel := context.WithTimeout(ctx, p.access.Deadline)
	defer cancel()
	var mu sync.Mutex
	obs := autoscale.Observations{Samples: map[autoscale.Signal]autoscale.Sample{}, Problems: map[autoscale.Signal]string{}}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(4)
	for _, s := range autoscale.Signals() {
		q, ok := queries[s]
		if !ok {
			continue
		}
		g.Go(func() error {
			v, err := p.query(gctx, q, now)
			var apiErr *promv1.Error
			mu.Lock()
			defer mu.Unlock()
			switch {
			case errors.As(err, &apiErr) && apiErr.Type == promv1.ErrBadData:
				obs.Problems[s] = "Prometheus rejected the query (bad_data)"
			case errors.As(err, &apiErr) && apiErr.Type == promv1.ErrExec:
				obs.Problems[s] = "Prometheus could not evaluate the query (execution)"
			case err != nil:
				return p.readError(err)
			case v != nil:
				obs.Samples[s] = *v
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return obs, err
	}
	return obs, nil
}

// query returns the sum of the query's samples, or nil when it returns none. NaN and infinite
// results (a division by zero) count as none: they say nothing about the load.
func (p *Prometheus) query(ctx context.Context, q string, now time.Time) (*autoscale.Sample, error) {
	ctx, cancel := context.WithTimeout(ctx, p.access.QueryTimeout)
	defer cancel()
	val, _, err := p.api.Query(ctx, q, now, promv1.WithLookbackDelta(p.lookback), promv1.WithTimeout(p.access.QueryTimeout))
	if err != nil {
		return nil, err
	}
	var (
		sum   float64
		n     int
		stamp time.Time
	)
	add := func(v model.SampleValue, ts model.Time) {
		f := float64(v)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return
		}
		sum += f
		n++
		if t := ts.Time(); t.After(stamp) {
			stamp = t
		}
	}
	switch r := val.(type) {
	case model.Vector:
		for _, s := range r {
			add(s.Value, s.Timestamp)
		}
	case *model.Scalar:
		add(r.Value, r.Timestamp)
	default:
		return nil, &promv1.Error{Type: promv1.ErrBadData, Msg: fmt.Sprintf("the query returns a %s, not an instant vector", val.Type())}
	}
	if n == 0 {
		return nil, nil
	}
	return &autoscale.Sample{Value: sum, Time: stamp}, nil
}
