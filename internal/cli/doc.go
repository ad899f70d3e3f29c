// Package cli is the strata command line: `strata plan` shows, without a cluster, the plan the
// operator would apply for a pipeline and why; `strata render` prints the objects it would
// apply; `strata simulate` replays a load trace through it and the autoscaler; `strata queries`
// prints the PromQL run for it. It lives apart from cmd/strata so that its behaviour — output,
// messages, exit codes — is tested in-process.
package cli
