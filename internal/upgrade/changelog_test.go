package upgrade

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/strata-dev/strata/internal/testutil"
)

func TestAllowedChanges(t *testing.T) {
	notes := "# Changelog\n\n## Unreleased\n\n### Pods rolled on upgrade\n- labels, because.\n" +
		"  <!-- pod-template-changes -->\n  - `Kafka spec.kafka.template.pod.metadata.labels[a.b/c]`\n" +
		"  - `SparkApplication spec.driver.labels[a.b/c]` (the driver's)\n  <!-- /pod-template-changes -->\n\n" +
		"## v0.2.0 - 2027-01-01\n<!-- pod-template-changes -->\n- `Elasticsearch spec.version`\n<!-- /pod-template-changes -->\n" +
		"## v0.1.0\n<!-- pod-template-changes -->\n- `KafkaNodePool spec.template`\n<!-- /pod-template-changes -->\n"
	for _, tc := range []struct {
		previous string
		want     []string
	}{
		{"v0.2.0", []string{"Kafka spec.kafka.template.pod.metadata.labels[a.b/c]", "SparkApplication spec.driver.labels[a.b/c]"}},
		{"v0.1.0", []string{"Kafka spec.kafka.template.pod.metadata.labels[a.b/c]", "SparkApplication spec.driver.labels[a.b/c]", "Elasticsearch spec.version"}},
	} {
		got, err := AllowedChanges(notes, tc.previous)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("since %s: %q, want %q", tc.previous, got, tc.want)
		}
	}
	for _, bad := range []string{
		"<!-- pod-template-changes -->\n- Kafka spec.x\n<!-- /pod-template-changes -->\n",
		"<!-- pod-template-changes -->\n- `Kafka spec.x`\n",
		"- `Kafka spec.x`\n<!-- /pod-template-changes -->\n",
	} {
		if _, err := AllowedChanges(bad, "v0.1.0"); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// TestChangelogListsSinceThePreviousRelease reads the repository's own CHANGELOG.md as the
// upgrade test does: its list parses, and each entry names a kind whose pod templates the test
// compares.
func TestChangelogListsSinceThePreviousRelease(t *testing.T) {
	r, err := PreviousRelease()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(testutil.Root(), "CHANGELOG.md"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := AllowedChanges(string(b), r.Tag)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range got {
		kind, _, _ := strings.Cut(c, " ")
		if _, ok := RollingKinds[kind]; !ok {
			t.Errorf("CHANGELOG.md lists %q: %s is not a kind whose pod templates the upgrade test compares", c, kind)
		}
	}
	t.Logf("since %s: %d pod template changes listed", r.Tag, len(got))
}

// TestPreviousReleaseResolves: hack/versions.env pins a release this clone can find, by its tag
// or its commit; a shallow clone skips, saying so.
func TestPreviousReleaseResolves(t *testing.T) {
	r, err := PreviousRelease()
	if err != nil {
		t.Fatal(err)
	}
	r, err = r.Resolve(testutil.Root())
	if _, shallow := err.(ErrNotInClone); shallow {
		t.Skipf("not checked: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s found by its %s (%s)", r.Tag, r.Resolved, r.Commit)
}
