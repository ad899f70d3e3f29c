package cli

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/strata-dev/strata/internal/plan"
)

// FuzzLoad feeds `strata plan`'s loader any bytes on stdin: it must never panic, every error
// must say which document (stdin) it is about, and whatever it admits must plan or fail with a
// FieldError — never a panic — and what plans must render as `strata plan` prints it. The seed corpus is testdata/fuzz/FuzzLoad (the test files and
// the adversarial shapes of issue 15); `make fuzz` runs it for FUZZTIME.
func FuzzLoad(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		in, err := load(context.Background(), []string{"-"}, bytes.NewReader(data), nil)
		if err != nil {
			if !strings.Contains(err.Error(), "<stdin>") {
				t.Errorf("the error names no document: %v", err)
			}
			return
		}
		pl, err := plan.Fresh(in.pipeline, in.tiers)
		if err != nil {
			var fe *plan.FieldError
			var missing *plan.MissingTierError
			if !errors.As(err, &fe) && !errors.As(err, &missing) {
				t.Errorf("an admitted pipeline fails to plan without naming a field: %v", err)
			}
			return
		}
		// The table explains whatever plans, its spikes section (a plan with one broker more)
		// included: it must not panic either.
		if err := writeTable(io.Discard, in.pipeline, in.tiers, pl); err != nil {
			t.Errorf("writing the table: %v", err)
		}
	})
}
