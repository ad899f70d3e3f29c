package simulate

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"
)

// WriteTable prints a result for people: per resource what it cost against the static peak
// and how it moved, then the pipeline's time under demand and its lag, then the decisions.
func WriteTable(w io.Writer, r *Result) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "Simulated %s\n\n", time.Duration(r.DurationSeconds)*time.Second)
	fmt.Fprintln(tw, "RESOURCE\tREPLICA-SECONDS\tSTATIC PEAK\tRATIO\tACTIONS\tREVERSALS\tMIN\tMAX")
	for _, x := range []struct {
		name string
		r    ResourceResult
	}{{"brokers", r.Resources.Brokers}, {"executors", r.Resources.Executors}, {"dataNodes", r.Resources.DataNodes}} {
		fmt.Fprintf(tw, "%s\t%.0f\t%.0f\t%s\t%d\t%d\t%d\t%d\n", x.name, x.r.ReplicaSeconds, x.r.StaticPeakReplicaSeconds,
			percent(x.r.ReplicaSeconds, x.r.StaticPeakReplicaSeconds), x.r.ScaleActions, x.r.Reversals, x.r.Min, x.r.Max)
	}
	var got, static float64
	for _, x := range []ResourceResult{r.Resources.Brokers, r.Resources.Executors, r.Resources.DataNodes} {
		got += x.ReplicaSeconds
		static += x.StaticPeakReplicaSeconds
	}
	fmt.Fprintf(tw, "total\t%.0f\t%.0f\t%s\t\t\t\t\n", got, static, percent(got, static))
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "\nCapacity below demand: %.0f s (%s of the time); Kafka's intake below it: %.0f s (%s)\n", r.SecondsBelowDemand,
		percent(r.SecondsBelowDemand, r.DurationSeconds), r.SecondsIntakeBelowDemand, percent(r.SecondsIntakeBelowDemand, r.DurationSeconds))
	fmt.Fprintf(w, "Largest lag: %.0f records, %.0f s\n", r.MaxLagRecords, r.MaxLagSeconds)
	writeKept(w, r)
	if len(r.Decisions) == 0 {
		_, err := fmt.Fprintln(w, "\nThe autoscaler changed nothing.")
		return err
	}
	fmt.Fprintln(w, "\nDECISIONS")
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "AT\tRESOURCE\tACTION\tFROM\tTO\tREASON\tWHY")
	for _, d := range r.Decisions {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%s\t%s\n", time.Duration(d.Seconds)*time.Second, d.Resource, d.Action, d.From, d.To, d.Reason, d.Message)
	}
	return tw.Flush()
}

func percent(part, whole float64) string {
	if whole == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", 100*part/whole)
}

// writeKept prints what brokers kept in advance would have done, when strata simulate replayed
// it (Result.BrokersKept).
func writeKept(w io.Writer, r *Result) {
	k := r.BrokersKept
	switch {
	case k == nil:
	case k.Tried == 0:
		fmt.Fprintln(w, "Brokers kept in advance: none can be, spec.kafka.brokers.max is spec.kafka.brokers.min")
	case k.Min == 0:
		fmt.Fprintf(w, "Brokers kept in advance: no spec.kafka.brokers.min up to %d keeps Kafka's intake at the demand on this trace\n", k.Tried)
	default:
		fmt.Fprintf(w, "Brokers kept in advance: with spec.kafka.brokers.min: %d Kafka's intake is never below the demand; capacity below "+
			"demand %.0f s (%s of the time), %s of the static peak's replica-seconds (%s as declared)\n", k.Min, k.SecondsBelowDemand,
			percent(k.SecondsBelowDemand, r.DurationSeconds), percent(k.StaticPeakRatio, 1), percent(r.Ratio(), 1))
	}
}
