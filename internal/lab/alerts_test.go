package lab

import (
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/strata-dev/strata/internal/alerts"
)

type ruleFile struct {
	Groups []struct {
		Rules []struct {
			Alert  string            `json:"alert"`
			Record string            `json:"record"`
			Expr   string            `json:"expr"`
			For    string            `json:"for"`
			Labels map[string]string `json:"labels"`
		} `json:"rules"`
	} `json:"groups"`
}

func parseRules(t *testing.T, b []byte) ruleFile {
	t.Helper()
	var f ruleFile
	if err := yaml.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	return f
}

// The lab's rule file differs from the generated one only in the alerts' `for:`.
func TestShortenForKeepsTheRules(t *testing.T) {
	rules, err := alerts.RuleGroups(alerts.Defaults)
	if err != nil {
		t.Fatal(err)
	}
	short, err := ShortenFor(rules, 15*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	before, after := parseRules(t, rules), parseRules(t, short)
	if len(before.Groups) != len(after.Groups) {
		t.Fatalf("groups: %d, want %d", len(after.Groups), len(before.Groups))
	}
	alertsSeen, shortened := 0, 0
	for i, g := range before.Groups {
		if len(g.Rules) != len(after.Groups[i].Rules) {
			t.Fatalf("group %d: %d rules, want %d", i, len(after.Groups[i].Rules), len(g.Rules))
		}
		for j, r := range g.Rules {
			a := after.Groups[i].Rules[j]
			if a.Alert != r.Alert || a.Record != r.Record || a.Expr != r.Expr || len(a.Labels) != len(r.Labels) {
				t.Errorf("rule %s%s changed beyond its for:", r.Alert, r.Record)
			}
			if r.Alert == "" {
				continue
			}
			alertsSeen++
			switch {
			case r.For == "" && a.For != "":
				t.Errorf("%s: for %q added", r.Alert, a.For)
			case r.For != "" && a.For != "15s":
				t.Errorf("%s: for %q, want 15s", r.Alert, a.For)
			case r.For != "":
				shortened++
			}
		}
	}
	if alertsSeen < 10 || shortened == 0 {
		t.Errorf("%d alerts, %d shortened: the rule file is not the one expected", alertsSeen, shortened)
	}
}

func TestShortenForRejectsGarbage(t *testing.T) {
	for _, in := range []string{"", "groups: []", "groups: {"} {
		if _, err := ShortenFor([]byte(in), time.Second); err == nil {
			t.Errorf("ShortenFor(%q): no error", in)
		}
	}
}
