package upstream

import (
	"context"
	"strings"
	"testing"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/internal/testutil"
)

// checkRendered compares `strata render`'s output for the sample with what the operator applied
// for it on the cluster: every field render prints must hold the same value in the live object
// (which also holds what the API server, the upstream operators and the owner references add),
// and no child of the pipeline may exist that render does not print. Render's help says which
// differences only the cluster can know; none of them concerns a first apply of the sample but
// the ES user's password, which render leaves out.
func checkRendered(ctx context.Context, t *testing.T, h *Cluster, p *v1alpha1.AnalyticsPipeline) {
	rendered := Rendered(t, "sample", p.Namespace, SampleFiles(t)...)
	var diffs []string
	testutil.Eventually(t, upstreamWait, "the operator's objects as strata render prints them", func() error {
		var err error
		if diffs, err = rendered.Differences(ctx, h.Client); err != nil {
			return err
		}
		for _, d := range diffs {
			if strings.HasSuffix(d, ": missing") {
				return errString(d) // not applied yet
			}
		}
		return nil
	})
	if len(diffs) > 0 {
		t.Errorf("strata render and the operator differ:\n  %s", strings.Join(diffs, "\n  "))
	}
	extra, err := rendered.Extra(ctx, h.Client, p)
	if err != nil {
		t.Fatal(err)
	}
	if len(extra) > 0 {
		t.Errorf("the operator made children strata render does not print: %v", extra)
	}
	t.Logf("strata render's %d objects compared with the operator's", len(rendered.Objects))
}

type errString string

func (e errString) Error() string { return string(e) }
