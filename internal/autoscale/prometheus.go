package autoscale

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"time"

	"github.com/prometheus/client_golang/api"
	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
)

// Prometheus reads signals from a Prometheus HTTP API with client_golang's API client.
type Prometheus struct {
	api promv1.API
	// lookback bounds how old a raw sample may be and still count: Prometheus' default of five
	// minutes would let a gauge of a vanished pod stand in for a live one.
	lookback time.Duration
	timeout  time.Duration
}

// NewPrometheus returns a source for the Prometheus at url. Samples older than lookback (the
// operator uses two intervals) are not returned.
func NewPrometheus(url string, lookback time.Duration) (*Prometheus, error) {
	c, err := api.NewClient(api.Config{Address: url})
	if err != nil {
		return nil, fmt.Errorf("spec.autoscaling.prometheusURL: %w", err)
	}
	return &Prometheus{api: promv1.NewAPI(c), lookback: lookback, timeout: 10 * time.Second}, nil
}

// Read evaluates every query at now, one after the other: a pipeline has about a dozen and they
// are cheap, and one at a time spares a Prometheus that serves many pipelines.
//
// A query Prometheus rejects (a metric whose type makes the function invalid, say) is noted as
// that signal's problem; a Prometheus that cannot be reached fails the whole reading at the
// first query, without waiting for the others to time out too.
func (p *Prometheus) Read(ctx context.Context, queries map[Signal]string, now time.Time) (Observations, error) {
	obs := Observations{Samples: map[Signal]Sample{}, Problems: map[Signal]string{}}
	for _, s := range Signals() {
		q, ok := queries[s]
		if !ok {
			continue
		}
		v, err := p.query(ctx, q, now)
		var apiErr *promv1.Error
		switch {
		case errors.As(err, &apiErr) && apiErr.Type != promv1.ErrServer && apiErr.Type != promv1.ErrTimeout:
			obs.Problems[s] = "Prometheus rejected the query: " + apiErr.Msg
		case err != nil:
			return obs, fmt.Errorf("querying Prometheus for %s: %w", s, unwrapNet(err))
		case v != nil:
			obs.Samples[s] = *v
		}
	}
	return obs, nil
}

// query returns the sum of the query's samples, or nil when it returns none. NaN and infinite
// results (a division by zero) count as none: they say nothing about the load.
func (p *Prometheus) query(ctx context.Context, q string, now time.Time) (*Sample, error) {
	ctx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	val, _, err := p.api.Query(ctx, q, now, promv1.WithLookbackDelta(p.lookback), promv1.WithTimeout(p.timeout))
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
	return &Sample{Value: sum, Time: stamp}, nil
}

// unwrapNet shortens a connection error to what says why: "dial tcp 127.0.0.1:9090: connect:
// connection refused" rather than the whole request URL with every query parameter.
func unwrapNet(err error) error {
	var op *net.OpError
	if errors.As(err, &op) {
		return op
	}
	return err
}
