package plan

import (
	"errors"
	"fmt"
	"strings"
)

// FieldError says which input field makes a plan impossible, in the API's field-path notation
// ("spec.kafka.brokers.max"), so that the operator's PlanValid condition and the CLI can point
// the user at the line to change.
type FieldError struct {
	// Object names the object the field belongs to when it is not the pipeline, e.g.
	// `StorageTier "hdd-st1"`; empty for the pipeline itself.
	Object string
	// Field is the path of the offending field.
	Field string
	// Detail says what is wrong with it and, where possible, what to do.
	Detail string
}

func (e *FieldError) Error() string {
	if e.Object != "" {
		return e.Object + ": " + e.Field + ": " + e.Detail
	}
	return e.Field + ": " + e.Detail
}

// MissingTierError says that a StorageTier the pipeline names does not exist (yet). It is a
// separate type from FieldError because the spec may be perfectly valid: tiers are cluster
// objects created independently, so the controller should wait for the tier rather than call
// the pipeline invalid.
type MissingTierError struct {
	// Field is the path of the field naming the tier, e.g. "spec.kafka.storage.tier".
	Field string
	// Tier is the missing StorageTier's name.
	Tier string
}

func (e *MissingTierError) Error() string {
	return fmt.Sprintf("%s: StorageTier %q not found", e.Field, e.Tier)
}

// IsMissingTier reports whether err is (or wraps) a MissingTierError.
func IsMissingTier(err error) bool {
	var m *MissingTierError
	return errors.As(err, &m)
}

func fieldErr(field, format string, args ...any) *FieldError {
	return &FieldError{Field: field, Detail: fmt.Sprintf(format, args...)}
}

func tierErr(tier, field, format string, args ...any) *FieldError {
	return &FieldError{Object: fmt.Sprintf("StorageTier %q", tier), Field: field, Detail: fmt.Sprintf(format, args...)}
}

// reasons collects the human explanations of why a workload cannot be carried within the
// spec's bounds; they end up in Plan.Unsatisfied joined by ReasonSeparator, which no reason
// contains, so readers (the CLI) can split them again.
type reasons []string

func (r *reasons) add(format string, args ...any) { *r = append(*r, fmt.Sprintf(format, args...)) }

func (r reasons) String() string { return strings.Join(r, ReasonSeparator) }

// ReasonSeparator separates the reasons in Plan.Unsatisfied.
const ReasonSeparator = "; "
