package upgrade

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/strata-dev/strata/internal/controlplane"
)

// Release is the previous release the upgrade starts from.
type Release struct {
	// Tag is its name (PREVIOUS_RELEASE); Commit the commit it tags (PREVIOUS_RELEASE_COMMIT).
	Tag, Commit string
	// Resolved is how the clone found it: "tag" or "commit".
	Resolved string
}

// PreviousRelease reads the previous release from hack/versions.env, the one place it is pinned.
func PreviousRelease() (Release, error) {
	v, err := controlplane.Versions()
	if err != nil {
		return Release{}, err
	}
	r := Release{Tag: v["PREVIOUS_RELEASE"], Commit: v["PREVIOUS_RELEASE_COMMIT"]}
	if r.Tag == "" || len(r.Commit) != 40 {
		return r, fmt.Errorf("hack/versions.env: PREVIOUS_RELEASE (%q) and PREVIOUS_RELEASE_COMMIT (%q, 40 hex digits) must be set", r.Tag, r.Commit)
	}
	return r, nil
}

// ErrNotInClone says the clone holds neither the release's tag nor its commit (a shallow clone):
// the caller skips, saying what was not checked.
type ErrNotInClone struct{ Release Release }

func (e ErrNotInClone) Error() string {
	return fmt.Sprintf("neither the tag %s nor its commit %s is in this clone's history (a shallow clone? `git fetch --unshallow --tags`)",
		e.Release.Tag, e.Release.Commit)
}

// Resolve finds the release in the repository at root: its tag when the clone carries tags, which
// must then tag the pinned commit, else the commit itself (CI's fresh clones may carry no tags).
func (r Release) Resolve(root string) (Release, error) {
	if c, err := git(root, "rev-parse", "--verify", "-q", r.Tag+"^{commit}"); err == nil {
		if c != r.Commit {
			return r, fmt.Errorf("the tag %s is commit %s, but hack/versions.env pins %s", r.Tag, c, r.Commit)
		}
		r.Resolved = "tag"
		return r, nil
	}
	if _, err := git(root, "cat-file", "-e", r.Commit+"^{commit}"); err == nil {
		r.Resolved = "commit"
		return r, nil
	}
	return r, ErrNotInClone{Release: r}
}

// Extract writes the release's source tree into dir (git archive: tracked files only, as a
// release's tarball holds them).
func (r Release) Extract(root, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	archive := exec.Command("git", "archive", "--format=tar", r.Commit)
	archive.Dir = root
	untar := exec.Command("tar", "-x", "-C", dir)
	pipe, err := archive.StdoutPipe()
	if err != nil {
		return err
	}
	untar.Stdin = pipe
	var errs strings.Builder
	archive.Stderr, untar.Stderr = &errs, &errs
	if err := untar.Start(); err != nil {
		return err
	}
	if err := archive.Run(); err != nil {
		return fmt.Errorf("git archive %s: %v: %s", r.Commit, err, errs.String())
	}
	if err := untar.Wait(); err != nil {
		return fmt.Errorf("untar %s: %v: %s", r.Commit, err, errs.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "charts", "strata", "Chart.yaml")); err != nil {
		return fmt.Errorf("release %s has no chart: %w", r.Tag, err)
	}
	return nil
}

func git(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.Output()
	return strings.TrimSpace(string(out)), err
}
