// Package simulate replays a load trace through a pipeline's plan and its autoscaler, in
// simulated time, to show what the operator would do with a given traffic and how well: how many
// replica-seconds each resource costs against a static configuration sized for the peak, how
// long capacity stays under demand, how far the consumers fall behind, and whether the
// autoscaler flaps.
//
// It is pure — no clock, no cluster, no randomness — and uses the operator's own code for every
// decision: plan.Fresh for each stage's capacity at the replicas running, autoscale.NewPolicy
// and autoscale.Recommend for the decisions, plan.Compute (the decision as
// plan.Observed.Autoscaling) for turning them into the plan to apply, as the operator does. What
// it adds is a model of the pipeline between decisions: records queue up where a stage is
// short of capacity, the signals the autoscaler reads are computed from those flows as
// Prometheus' rate() and deriv() would show them, and changes take effect after the delays of
// the upstream operators (Delays).
package simulate
