package controllers

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestEventNote(t *testing.T) {
	if got := eventNote("short"); got != "short" {
		t.Errorf("a short note changed: %q", got)
	}
	// Multi-byte characters across the cut: the note stays valid UTF-8 and within the limit.
	long := strings.Repeat("é", 600)
	got := eventNote(long)
	if len(got) > noteLimit || !utf8.ValidString(got) || !strings.HasSuffix(got, " ...") {
		t.Errorf("a %d-byte note became %d bytes (valid UTF-8 %v), want at most %d ending in \" ...\"",
			len(long), len(got), utf8.ValidString(got), noteLimit)
	}
}
