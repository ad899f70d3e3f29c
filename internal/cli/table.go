package cli

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/internal/plan"
)

// The table view explains a plan to a person: what was sized and why, what every stage can
// carry against the workload, what limits the pipeline and what would relieve it, how each
// executor's memory is split, and where the data lives at what cost.

// tableWriter accumulates the first write error, so the rendering code reads top to bottom.
type tableWriter struct {
	w   io.Writer
	err error
}

func (t *tableWriter) printf(format string, args ...any) {
	if t.err == nil {
		_, t.err = fmt.Fprintf(t.w, format, args...)
	}
}

// columns renders rows of tab-separated cells, aligned.
func (t *tableWriter) columns(rows ...string) {
	tw := tabwriter.NewWriter(t.w, 0, 8, 2, ' ', 0)
	for _, r := range rows {
		fmt.Fprintln(tw, r)
	}
	if err := tw.Flush(); err != nil && t.err == nil {
		t.err = err
	}
}

// wrapped prints text wrapped at about 100 columns, every line indented.
func (t *tableWriter) wrapped(indent, first, text string) {
	line := indent + first
	for _, word := range strings.Fields(text) {
		if len(line) > len(indent+first) && len(line)+1+len(word) > 100 {
			t.printf("%s\n", line)
			line = indent + strings.Repeat(" ", len(first))
		} else if len(line) > len(indent+first) {
			line += " "
		}
		line += word
	}
	t.printf("%s\n", line)
}

func rate(bytesPerSecond int64) string {
	return trimZeros(fmt.Sprintf("%.2f", float64(bytesPerSecond)/1e6)) + " MB/s"
}

func trimZeros(s string) string {
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

func writeTable(w io.Writer, p *v1alpha1.AnalyticsPipeline, tiers []v1alpha1.StorageTier, pl v1alpha1.Plan) error {
	t := &tableWriter{w: w}
	s := p.Spec
	mps := s.Workload.MessagesPerSecond
	target := s.Network.TargetUtilizationPercent

	t.printf("AnalyticsPipeline %s/%s\n\n", p.Namespace, p.Name)
	t.columns(
		fmt.Sprintf("Workload\t%d msgs/s of %d B = %s ingest; consumers read %d msgs/s (%s)",
			mps, s.Workload.MessageBytes, rate(pl.IngestBytesPerSecond),
			s.Workload.ConsumerMessagesPerSecond, rate(s.Workload.ConsumerMessagesPerSecond*s.Workload.MessageBytes)),
		fmt.Sprintf("Links\t%s bit/s per node: %s usable (%d%% efficiency), planned up to %s (%d%% target)",
			s.Network.LinkBitsPerSecond.String(), rate(pl.LinkUsableBytesPerSecond), s.Network.EfficiencyPercent,
			rate(pl.LinkPlannedBytesPerSecond), target),
	)

	writeSizing(t, s, pl)
	writeStages(t, s, pl)
	writeSpikes(t, p, tiers, pl)
	writeMemory(t, s, pl)
	writeResources(t, s, pl)
	writeStorage(t, s, tiers, pl)
	return t.err
}

func bounds(min, max int32) string {
	if min == max {
		return fmt.Sprintf("fixed %d", min)
	}
	return fmt.Sprintf("%d..%d", min, max)
}

// partitionsBecause explains an automatic partition count: a partition per executor core,
// rounded up to a multiple of the brokers so that each leads as many (internal/plan, sizing.go),
// unless that would pass v1alpha1.MaxAutoPartitions.
func partitionsBecause(pl v1alpha1.Plan) string {
	why := fmt.Sprintf("one per executor core (%d executors x %d cores; Spark reads one per task)", pl.Executors, pl.ExecutorCores)
	b := max(pl.Brokers, 1)
	switch {
	case pl.Partitions%b != 0:
		return why + fmt.Sprintf("; a multiple of the %d brokers would pass %d, the most Strata chooses by itself", b, v1alpha1.MaxAutoPartitions)
	case pl.Partitions > pl.Executors*pl.ExecutorCores:
		return why + fmt.Sprintf(", rounded up to a multiple of the %d brokers so each leads %d", b, pl.Partitions/b)
	}
	return why + fmt.Sprintf(", a multiple of the %d brokers so each leads %d", b, pl.Partitions/b)
}

func writeSizing(t *tableWriter, s v1alpha1.AnalyticsPipelineSpec, pl v1alpha1.Plan) {
	target := s.Network.TargetUtilizationPercent
	partitions, partitionsWhy := "auto", partitionsBecause(pl)
	if s.Kafka.Topic.Partitions > 0 {
		partitions, partitionsWhy = "fixed", "set by spec.kafka.topic.partitions"
		if idle := pl.Executors*pl.ExecutorCores - pl.Partitions; idle > 0 {
			partitionsWhy += fmt.Sprintf("; fewer than the %d executor cores, so %d cores sit idle", pl.Executors*pl.ExecutorCores, idle)
		}
		if b := max(pl.Brokers, 1); pl.Partitions%b != 0 {
			partitionsWhy += fmt.Sprintf("; not a multiple of the %d brokers, so the busiest leads %d where the mean is %.1f",
				b, (pl.Partitions+b-1)/b, float64(pl.Partitions)/float64(b))
		}
	}
	shards, shardsWhy := "auto", "one primary per data node"
	if s.Elasticsearch.Shards > 0 {
		shards, shardsWhy = "fixed", "set by spec.elasticsearch.shards"
	}
	t.printf("\nSIZING\n")
	t.columns(
		"WHAT\tPLANNED\tALLOWED\tBECAUSE",
		fmt.Sprintf("Kafka brokers\t%d\t%s\tthe busiest receives %s, sends %s, writes %s (%s); replication %d, min ISR %d",
			pl.Brokers, bounds(s.Kafka.Brokers.Min, s.Kafka.Brokers.Max),
			rate(pl.BrokerReceiveBytesPerSecond), rate(pl.BrokerSendBytesPerSecond), rate(pl.BrokerDiskWriteBytesPerSecond),
			s.Kafka.Storage.Tier, pl.ReplicationFactor, pl.MinInSyncReplicas),
		fmt.Sprintf("Topic partitions\t%d\t%s\t%s", pl.Partitions, partitions, partitionsWhy),
		fmt.Sprintf("Spark executors\t%d\t%s\t%d msgs/s at %d%% of %d msgs/s each; each reads %s from Kafka",
			pl.Executors, bounds(s.Spark.Executors.Min, s.Spark.Executors.Max),
			s.Workload.MessagesPerSecond, target, s.Spark.MessagesPerSecondPerExecutor, rate(pl.ExecutorReceiveBytesPerSecond)),
		fmt.Sprintf("ES data nodes\t%d\t%s\t%d msgs/s x %d copies (primary + replicas) at %d%% of %d msgs/s each",
			pl.ElasticsearchDataNodes, bounds(s.Elasticsearch.DataNodes.Min, s.Elasticsearch.DataNodes.Max),
			s.Workload.MessagesPerSecond, plan.IndexCopies(s.Elasticsearch), target, s.Elasticsearch.MessagesPerSecondPerNode),
		fmt.Sprintf("Index shards\t%d\t%s\t%s", pl.Shards, shards, shardsWhy),
		fmt.Sprintf("Producers\t%d\tspec\teach sends %s", s.Workload.Producers, rate(pl.ProducerSendBytesPerSecond)),
	)
}

// utilization is the workload as a share of a stage's capacity, in percent.
func utilization(mps, capacity int64) float64 {
	if capacity <= 0 {
		return 0
	}
	return float64(mps) * 100 / float64(capacity)
}

func loadString(mps, capacity int64) string {
	if capacity <= 0 {
		return "no capacity"
	}
	return fmt.Sprintf("%.1f%%", utilization(mps, capacity))
}

// overTarget reports whether a stage cannot carry the workload within the target utilization,
// the same test the planner makes (cross-multiplied, to stay in integers).
func overTarget(mps, capacity int64, target int32) bool {
	return capacity*int64(target) < mps*100 || capacity <= 0
}

func writeStages(t *tableWriter, s v1alpha1.AnalyticsPipelineSpec, pl v1alpha1.Plan) {
	mps := s.Workload.MessagesPerSecond
	target := s.Network.TargetUtilizationPercent
	t.printf("\nSTAGES: what each stage carries at 100%% of its usable resources, against %d msgs/s\n", mps)
	rows := []string{"STAGE\tCAPACITY\tLOAD\tSTATUS"}
	var over []string
	for _, st := range pl.Stages {
		status := "ok"
		switch {
		case st.MaxMessagesPerSecond < mps:
			status = "SATURATED: cannot carry the workload"
		case overTarget(mps, st.MaxMessagesPerSecond, target):
			status = fmt.Sprintf("over the %d%% target", target)
		}
		if status != "ok" {
			over = append(over, st.Name)
		}
		if st.Name == pl.Bottleneck {
			status += "  <- bottleneck"
		}
		rows = append(rows, fmt.Sprintf("%s\t%d msgs/s\t%s\t%s", st.Name, st.MaxMessagesPerSecond, loadString(mps, st.MaxMessagesPerSecond), status))
	}
	t.columns(rows...)

	if pl.Bottleneck == v1alpha1.BottleneckNone {
		slowest := pl.Stages[0]
		for _, st := range pl.Stages {
			if st.MaxMessagesPerSecond < slowest.MaxMessagesPerSecond {
				slowest = st
			}
		}
		t.printf("\nBottleneck: None. Every stage carries %d msgs/s within the %d%% target.\n", mps, target)
		t.printf("The pipeline tops out at %d msgs/s, where %s saturates first.\n", pl.MaxMessagesPerSecond, slowest.Name)
		return
	}
	t.printf("\nBottleneck: %s. The pipeline tops out at %d msgs/s", pl.Bottleneck, pl.MaxMessagesPerSecond)
	if pl.MaxMessagesPerSecond < mps {
		t.printf(", short of the %d msgs/s it must carry.\n", mps)
	} else {
		t.printf(": carrying %d msgs/s loads %s to %s, above the %d%% target.\n",
			mps, pl.Bottleneck, loadString(mps, pl.MaxMessagesPerSecond), target)
	}
	if pl.Unsatisfied != "" {
		t.printf("Why:\n")
		for _, reason := range strings.Split(pl.Unsatisfied, plan.ReasonSeparator) {
			t.wrapped("  ", "- ", reason)
		}
	}
	// The bottleneck first, then any other stage short of headroom.
	sort.SliceStable(over, func(i, j int) bool { return over[i] == pl.Bottleneck && over[j] != pl.Bottleneck })
	for _, name := range over {
		t.printf("To relieve %s:\n", name)
		for _, r := range remedies(name) {
			t.wrapped("  ", "- ", r)
		}
	}
}

// replicationWarning is the only way the CLI ever mentions lowering replication.
const replicationWarning = "lower spec.kafka.replicationFactor only if you accept the RISK OF DATA LOSS: " +
	"with fewer replicas, losing a broker can lose records producers were told were stored"

// remedies says what would relieve a stage, in order of preference.
func remedies(stage string) []string {
	switch stage {
	case v1alpha1.StageProducerNetwork:
		return []string{
			"add producer nodes (spec.workload.producers): each sends ingest / producers",
			"give the producer nodes a faster link",
			"compress records in the producers (Kafka's compression.type): fewer bytes on every link, at the cost of CPU",
		}
	case v1alpha1.StageKafkaBrokerNetwork:
		return []string{
			"use a faster link (spec.network.linkBitsPerSecond)",
			"allow more brokers (raise spec.kafka.brokers.max): each carries 1/B of the traffic",
			"compress records (Kafka's compression.type): fewer bytes on every link, at the cost of CPU",
			"if consumers read faster than the ingest (catching up), their reads add to the brokers' outbound traffic: spec.workload.consumerMessagesPerSecond",
			replicationWarning,
		}
	case v1alpha1.StageKafkaDisk:
		return []string{
			"put spec.kafka.storage on a tier with more write bandwidth (NVMe or SSD)",
			"allow more brokers (raise spec.kafka.brokers.max): each writes 1/B of the replicated ingest",
			"compress records (Kafka's compression.type): fewer bytes written, at the cost of CPU",
			replicationWarning,
		}
	case v1alpha1.StageSparkNetwork:
		return []string{
			"allow more executors (raise spec.spark.executors.max): each reads 1/E of the topic",
			"use a faster link (spec.network.linkBitsPerSecond)",
		}
	case v1alpha1.StageSparkProcessing:
		return []string{
			"allow more executors (raise spec.spark.executors.max)",
			"make each executor faster (more spec.spark.executors.cores, a leaner job), then measure and update spec.spark.messagesPerSecondPerExecutor",
		}
	case v1alpha1.StageSparkShuffleDisk:
		return []string{
			"put spec.spark.shuffle.dataTier or spillTier (the one Why names) on a tier with more write bandwidth, or one whose bandwidth grows with the volume's size (throughputPerTiB): the plan then claims a volume large enough",
			"allow more executors (raise spec.spark.executors.max): each writes 1/E of the shuffle data",
		}
	case v1alpha1.StageElasticsearchIndexing:
		return []string{
			"allow more data nodes (raise spec.elasticsearch.dataNodes.max)",
			"make each node index faster (a faster tier for spec.elasticsearch.storage, bulk sizes), then update spec.elasticsearch.messagesPerSecondPerNode",
		}
	}
	return nil
}

func writeMemory(t *tableWriter, s v1alpha1.AnalyticsPipelineSpec, pl v1alpha1.Plan) {
	m, em := s.Spark.Memory, pl.ExecutorMemory
	t.printf("\nEXECUTOR MEMORY: %s per executor pod\n", em.Pod.String())
	t.columns(
		"PART\tSIZE\tWHAT IT IS",
		fmt.Sprintf("Heap\t%s\tthe JVM heap (spark.executor.memory); at least minHeap %s", em.Heap.String(), m.MinHeap.String()),
		fmt.Sprintf("Off-heap\t%s\t%d%% of Spark memory, outside the heap: returned to the OS when freed", em.OffHeap.String(), m.OffHeapPercent),
		fmt.Sprintf("Overhead\t%s\tnative memory (metaspace, threads, buffers): max(384Mi, 10%% of JVM memory)", em.Overhead.String()),
		fmt.Sprintf("Page cache\t%s\t%d%% of the budget, for the page cache of shuffle and spill files", em.PageCache.String(), m.PageCachePercent),
		fmt.Sprintf("Pod\t%s\tthe pod's memory limit: heap + off-heap + overhead + page cache", em.Pod.String()),
	)
	t.printf("\nSpark settings:\n")
	keys := make([]string, 0, len(em.SparkConf))
	for k := range em.SparkConf {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	rows := make([]string, len(keys))
	for i, k := range keys {
		rows[i] = fmt.Sprintf("  %s\t%s", k, em.SparkConf[k])
	}
	t.columns(rows...)
	t.printf("Executor Java options (the heap starts small and gives memory back, so the page cache can use it):\n  %s\n", em.JavaOptions)
}

// writeResources prints the Kafka and Elasticsearch pods' planned CPU and memory.
func writeResources(t *tableWriter, s v1alpha1.AnalyticsPipelineSpec, pl v1alpha1.Plan) {
	if len(pl.Resources) == 0 {
		return
	}
	why := map[string]string{
		v1alpha1.RoleKafkaBroker:         "CPU to fill the link both ways; page cache for a minute of a full link's writes",
		v1alpha1.RoleKafkaController:     "the KRaft metadata log",
		v1alpha1.RoleElasticsearchData:   fmt.Sprintf("CPU to index %d docs/s of %d B (every copy counted)", plan.IndexingPerDataNode(&s), s.Workload.MessageBytes),
		v1alpha1.RoleElasticsearchMaster: "the cluster state",
	}
	t.printf("\nRESOURCES: per pod; memory is requested and limited alike, the heap and page cache inside it\n")
	rows := []string{"ROLE\tCPU\tMEMORY\tHEAP\tPAGE CACHE\tFOR"}
	for _, r := range pl.Resources {
		rows = append(rows, fmt.Sprintf("%s\t%s\t%s\t%s\t%s\t%s", r.Role, r.CPU.String(), r.Memory.String(),
			r.Heap.String(), r.PageCache.String(), why[r.Role]))
	}
	t.columns(rows...)
}
