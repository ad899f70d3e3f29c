// Package autoscaling is the autoscaling controller: every interval it reads an autoscaled
// pipeline's signals from Prometheus, decides with autoscale.Recommend, and writes the decision
// to status.autoscaling and the Autoscaling condition under a field manager of its own. One
// reconcile is one reading (read) and one write (writeVerdict); there is no step table, because
// there is nothing more to it. What it needs of the cluster besides the metrics it asks through
// Cluster, which the pipeline controller satisfies: it imports no other controller.
package autoscaling
