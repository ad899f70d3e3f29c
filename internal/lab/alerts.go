package lab

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/prometheus/common/model"
	"sigs.k8s.io/yaml"
)

// DefaultAlertFor is the `for:` every lab alert waits when Options.AlertFor is zero: one and a
// half of the lab's 10 s evaluations, so an alert fires on its second evaluation that holds.
const DefaultAlertFor = 15 * time.Second

// ShortenFor rewrites a Prometheus rule file (as alerts.RuleGroups renders it) so that every
// alert with a `for:` waits d instead. The expressions, labels and annotations are untouched:
// the lab proves that each alert's condition holds and fires under Prometheus' own rule
// evaluation in its scenario, without waiting out the production durations (5–30 minutes); the
// durations themselves are checked by the promtool unit tests (config/prometheus/tests).
func ShortenFor(rules []byte, d time.Duration) ([]byte, error) {
	var file struct {
		Groups []struct {
			Name  string           `json:"name"`
			Rules []map[string]any `json:"rules"`
		} `json:"groups"`
	}
	if err := yaml.Unmarshal(rules, &file); err != nil {
		return nil, fmt.Errorf("parse the rule file: %w", err)
	}
	if len(file.Groups) == 0 {
		return nil, fmt.Errorf("the rule file has no groups")
	}
	out := model.Duration(d).String()
	for _, g := range file.Groups {
		for _, r := range g.Rules {
			if _, isAlert := r["alert"]; !isAlert {
				continue
			}
			if _, has := r["for"]; has {
				r["for"] = out
			}
		}
	}
	return yaml.Marshal(file)
}

// WaitAlert waits until Prometheus reports alertname in state ("pending" or "firing") through
// its ALERTS series, or timeout passes; it returns the last answer and whether it came.
func (l *Lab) WaitAlert(ctx context.Context, alertname, state string, timeout time.Duration) (Result, bool) {
	q := fmt.Sprintf(`ALERTS{alertname=%s, alertstate=%s}`, strconv.Quote(alertname), strconv.Quote(state))
	return l.Prometheus.WaitFor(ctx, q, timeout, func(r Result) bool { return r.Err == nil && len(r.Series) > 0 })
}

// alertFor is the lab's `for:` for every alert.
func (o Options) alertFor() time.Duration {
	if o.AlertFor > 0 {
		return o.AlertFor
	}
	return DefaultAlertFor
}
