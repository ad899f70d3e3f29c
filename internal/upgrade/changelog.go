package upgrade

import (
	"bufio"
	"fmt"
	"regexp"
	"strings"
)

// The marked list of CHANGELOG.md: the pod template changes a release makes on purpose, each
// explained by the entry it stands under. Between the markers, one change a line:
//
//	<!-- pod-template-changes -->
//	- `Kafka spec.entityOperator.template.pod.metadata.labels[strata.dev/pipeline]`
//	<!-- /pod-template-changes -->
//
// (Kind, then the field's path as Diff writes it.) HTML comments keep the markers out of the
// rendered notes.
const (
	beginMarker = "<!-- pod-template-changes"
	endMarker   = "<!-- /pod-template-changes -->"
)

var changeLine = regexp.MustCompile("^- `([A-Za-z]+) ([^`\\s]+)`")

// AllowedChanges reads the pod template changes the release notes list since the release
// previous (every marked list above previous's heading, "## <previous>"): what an upgrade from
// previous may change, as "Kind path".
func AllowedChanges(changelog, previous string) ([]string, error) {
	var out []string
	in := false
	s := bufio.NewScanner(strings.NewReader(changelog))
	for n := 1; s.Scan(); n++ {
		line := strings.TrimSpace(s.Text())
		switch {
		case isReleaseHeading(line, previous):
			if in {
				return nil, fmt.Errorf("CHANGELOG.md:%d: %s's heading inside a marked list", n, previous)
			}
			return out, nil
		case strings.HasPrefix(line, endMarker):
			if !in {
				return nil, fmt.Errorf("CHANGELOG.md:%d: %s without %s", n, endMarker, beginMarker)
			}
			in = false
		case strings.HasPrefix(line, beginMarker):
			in = true
		case in && line != "":
			m := changeLine.FindStringSubmatch(line)
			if m == nil {
				return nil, fmt.Errorf("CHANGELOG.md:%d: %q is not a change (- `Kind path`)", n, line)
			}
			out = append(out, m[1]+" "+m[2])
		}
	}
	if in {
		return nil, fmt.Errorf("CHANGELOG.md: a marked list without %s", endMarker)
	}
	// No heading of previous: every list counts (the notes began after it, or it is the
	// first release).
	return out, s.Err()
}

// isReleaseHeading: "## v0.1.0", "## [v0.1.0] - 2026-11-27", "## v0.1.0 (2026-11-27)".
func isReleaseHeading(line, release string) bool {
	rest, ok := strings.CutPrefix(line, "## ")
	if !ok {
		return false
	}
	rest = strings.TrimPrefix(rest, "[")
	if !strings.HasPrefix(rest, release) {
		return false
	}
	rest = rest[len(release):]
	return rest == "" || strings.ContainsAny(rest[:1], "] (-")
}
