package main

import "testing"

func TestSoftLimit(t *testing.T) {
	for _, c := range []struct {
		content string
		want    int64
	}{
		{"536870912\n", 483183820},   // the chart's 512Mi
		{"max\n", 0},                 // cgroup v2, no limit
		{"9223372036854771712\n", 0}, // cgroup v1, no limit
		{"", 0},
		{"-1", 0},
	} {
		if got := softLimit(c.content); got != c.want {
			t.Errorf("softLimit(%q) = %d, want %d", c.content, got, c.want)
		}
	}
}
