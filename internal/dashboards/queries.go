package dashboards

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
)

// PanelQuery is one PromQL target of one panel.
type PanelQuery struct {
	Dashboard string // the dashboard's uid (All's key)
	Panel     string // the panel's title
	Index     int    // the target's position in the panel, from 0
	Targets   int    // how many targets the panel has
	Expr      string // as in the dashboard JSON, with its $variables
}

// Name is "<dashboard> / <panel>", with " #n" when the panel has more than one target: how the
// tests and the lab name a query.
func (q PanelQuery) Name() string {
	name := q.Dashboard + " / " + q.Panel
	if q.Targets > 1 {
		name = fmt.Sprintf("%s #%d", name, q.Index+1)
	}
	return name
}

// Queries are every non-empty target of every panel of All's dashboards, nested panels (those
// of collapsed rows) included, in dashboard then panel order. The PromQL checks (the parser, the
// metric-name checks, the lab's evaluation against real series) read the queries from here, so
// they see exactly what Grafana is given.
func Queries() ([]PanelQuery, error) {
	boards, err := All()
	if err != nil {
		return nil, err
	}
	names := slices.Sorted(maps.Keys(boards))
	var out []PanelQuery
	for _, n := range names {
		var d struct {
			Panels []panelJSON `json:"panels"`
		}
		if err := json.Unmarshal(boards[n], &d); err != nil {
			return nil, fmt.Errorf("dashboard %s: %w", n, err)
		}
		var walk func([]panelJSON)
		walk = func(ps []panelJSON) {
			for _, p := range ps {
				for i, t := range p.Targets {
					if t.Expr != "" {
						out = append(out, PanelQuery{Dashboard: n, Panel: p.Title, Index: i, Targets: len(p.Targets), Expr: t.Expr})
					}
				}
				walk(p.Panels)
			}
		}
		walk(d.Panels)
	}
	return out, nil
}

type panelJSON struct {
	Title   string      `json:"title"`
	Panels  []panelJSON `json:"panels"`
	Targets []struct {
		Expr string `json:"expr"`
	} `json:"targets"`
}
