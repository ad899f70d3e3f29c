package autoscale

import (
	"slices"
	"testing"
)

// TestSignalsSorted: Signals is the order readings and messages use; a signal added out of
// order, or twice, would change them.
func TestSignalsSorted(t *testing.T) {
	got := Signals()
	if !slices.IsSorted(got) || len(slices.Compact(slices.Clone(got))) != len(got) {
		t.Errorf("Signals() = %v, want sorted and without duplicates", got)
	}
	got[0] = "changed"
	if Signals()[0] == "changed" {
		t.Error("Signals() returns the package's own slice: a caller can change it")
	}
}
