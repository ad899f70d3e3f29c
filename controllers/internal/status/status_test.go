package status

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// TestBounded: a message over the limit is cut on a rune boundary and marked.
func TestBounded(t *testing.T) {
	if got := Bounded("short", 10); got != "short" {
		t.Errorf("Bounded(short) = %q", got)
	}
	// A cut inside a multi-byte rune moves before it.
	msg := strings.Repeat("a", 20) + strings.Repeat("é", 20)
	got := Bounded(msg, 21+len(TruncatedMark))
	if !utf8.ValidString(got) || len(got) > 21+len(TruncatedMark) || got != strings.Repeat("a", 20)+TruncatedMark {
		t.Errorf("Bounded cut a rune: %q", got)
	}
}
