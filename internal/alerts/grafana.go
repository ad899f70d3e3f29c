package alerts

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/common"
	"github.com/grafana/grafana-foundation-sdk/go/expr"
	"github.com/grafana/grafana-foundation-sdk/go/prometheus"
)

// GrafanaOptions says where Grafana-managed rules go and what they query.
type GrafanaOptions struct {
	// DatasourceUID is the Prometheus data source's uid (kube-prometheus-stack: "prometheus").
	DatasourceUID string
	// Folder is the folder the rules are provisioned into.
	Folder string
	// Interval is the evaluation interval of every group.
	Interval string
	// OrgID is the organisation (1 in a single-org Grafana).
	OrgID int64
}

// DefaultGrafana fits kube-prometheus-stack's Grafana, whose Prometheus data source has the uid
// "prometheus".
var DefaultGrafana = GrafanaOptions{DatasourceUID: "prometheus", Folder: "Strata", Interval: "1m", OrgID: 1}

// The file provisioning format of Grafana's alerting (provisioning/alerting/*.yaml): apiVersion 1,
// rule groups with orgId, name, folder and interval, rules with uid, title, condition, data.
type grafanaFile struct {
	APIVersion int            `yaml:"apiVersion"`
	Groups     []grafanaGroup `yaml:"groups"`
}

type grafanaGroup struct {
	OrgID    int64         `yaml:"orgId"`
	Name     string        `yaml:"name"`
	Folder   string        `yaml:"folder"`
	Interval string        `yaml:"interval"`
	Rules    []grafanaRule `yaml:"rules"`
}

type grafanaRule struct {
	UID          string            `yaml:"uid"`
	Title        string            `yaml:"title"`
	Condition    string            `yaml:"condition"`
	Data         []grafanaQuery    `yaml:"data"`
	NoDataState  string            `yaml:"noDataState"`
	ExecErrState string            `yaml:"execErrState"`
	For          string            `yaml:"for"`
	Labels       map[string]string `yaml:"labels"`
	Annotations  map[string]string `yaml:"annotations"`
	IsPaused     bool              `yaml:"isPaused"`
}

type grafanaQuery struct {
	RefID             string         `yaml:"refId"`
	RelativeTimeRange timeRange      `yaml:"relativeTimeRange"`
	DatasourceUID     string         `yaml:"datasourceUid"`
	Model             map[string]any `yaml:"model"`
}

type timeRange struct {
	From int `yaml:"from"`
	To   int `yaml:"to"`
}

// firingCondition makes a Grafana rule fire for every series its PromQL returns, as Prometheus
// does: an alert expression returns exactly the series that fire, whatever their values.
const firingCondition = "is_number($A) || is_nan($A) || is_inf($A)"

// GrafanaRules renders the alerts as Grafana-managed alert rules in Grafana's file provisioning
// format. Each rule queries Prometheus with the alert's PromQL (refId A, instant) and fires for
// every series A returns (refId B, a math expression), for the same for: duration, with the same
// labels and annotations; no data means nothing fires (noDataState OK), as in Prometheus.
func GrafanaRules(o GrafanaOptions, sub Substitution) ([]byte, error) {
	file := grafanaFile{APIVersion: 1}
	for _, g := range Groups() {
		gg := grafanaGroup{OrgID: o.OrgID, Name: g.Name, Folder: o.Folder, Interval: o.Interval}
		for _, a := range g.Alerts {
			r, err := grafanaRuleOf(a, o, sub)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", a.Name, err)
			}
			gg.Rules = append(gg.Rules, r)
		}
		file.Groups = append(file.Groups, gg)
	}
	return marshal(Header, file)
}

func grafanaRuleOf(a Alert, o GrafanaOptions, sub Substitution) (grafanaRule, error) {
	ds := common.DataSourceRef{Type: cog.ToPtr("prometheus"), Uid: cog.ToPtr(o.DatasourceUID)}
	promql, err := Pretty(sub.apply(a.Expr))
	if err != nil {
		return grafanaRule{}, err
	}
	q, err := prometheus.NewDataqueryBuilder().Datasource(ds).Expr(promql).Instant().RefId("A").Build()
	if err != nil {
		return grafanaRule{}, err
	}
	cond, err := expr.NewTypeMathBuilder().
		Datasource(common.DataSourceRef{Type: cog.ToPtr("__expr__"), Uid: cog.ToPtr("__expr__")}).
		Expression(firingCondition).RefId("B").Build()
	if err != nil {
		return grafanaRule{}, err
	}
	qm, err := toMap(q)
	if err != nil {
		return grafanaRule{}, err
	}
	cm, err := toMap(cond)
	if err != nil {
		return grafanaRule{}, err
	}
	lookback := int(a.For.Seconds()) + 600
	return grafanaRule{
		UID:       GrafanaUID(a),
		Title:     a.Name,
		Condition: "B",
		Data: []grafanaQuery{
			{RefID: "A", RelativeTimeRange: timeRange{From: lookback}, DatasourceUID: o.DatasourceUID, Model: qm},
			{RefID: "B", DatasourceUID: "__expr__", Model: cm},
		},
		NoDataState:  "OK",
		ExecErrState: "Error",
		For:          duration(a.For),
		Labels:       map[string]string{"severity": a.Severity},
		Annotations: map[string]string{
			"summary":     sub.apply(a.Summary),
			"description": grafanaTemplate(sub.apply(a.Description)),
			"runbook_url": a.RunbookURL(),
		},
	}, nil
}

// GrafanaUID is the rule's uid: "strata-" and the name in kebab case, at most 40 characters of
// [a-z0-9-], stable across releases; an alert with rules of several severities (warning and
// critical) gets the severity appended.
func GrafanaUID(a Alert) string {
	kebab := strings.ToLower(regexp.MustCompile(`([a-z0-9])([A-Z])`).ReplaceAllString(strings.TrimPrefix(a.Name, "Strata"), "$1-$2"))
	uid := "strata-" + kebab
	n := 0
	for _, other := range All() {
		if other.Name == a.Name {
			n++
		}
	}
	if n > 1 {
		uid += "-" + a.Severity
	}
	return uid
}

// grafanaTemplate adapts Prometheus' annotation templates to Grafana's: there, $value is a
// description of every query's value, and $values.A.Value the PromQL's.
func grafanaTemplate(s string) string {
	return strings.ReplaceAll(s, "$value", "$values.A.Value")
}

func toMap(v any) (map[string]any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	return m, json.Unmarshal(b, &m)
}
