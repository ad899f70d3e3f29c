package lab

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/strata-dev/strata/internal/lab/netlab"
)

// The lab has no Strimzi and no Cruise Control: when the autoscaler asks for more brokers, the
// lab does what they would do with Kafka's own tools. Strimzi starts the new broker pods; its
// auto-rebalance on scale-up asks Cruise Control for an add-brokers rebalance, which moves
// partition replicas onto the new brokers at the rebalance template's replicationThrottle and
// finally elects the preferred leaders. Here kafka-reassign-partitions.sh
// (ReassignPartitionsCommand) proposes a placement of the topic over all brokers (--generate:
// replicas and leaders spread evenly, as Cruise Control's distribution goals do) and moves the
// replicas with --throttle, which sets the same broker and topic throttle configurations
// (leader/follower.replication.throttled.rate and .replicas) Cruise Control sets; --verify
// removes them once every move completed; kafka-leader-election.sh (LeaderElectionCommand)
// then moves each partition's leadership to its first replica.

// Reassignment is what moving a topic's partitions over the brokers took.
type Reassignment struct {
	// Moved counts the partitions whose replicas changed, Bytes the log bytes copied to the
	// brokers that gained a replica (each such replica's size, as its current leader holds it).
	Moved, Batches int
	Bytes          int64
	// Took is from the moves' start to the last one completing; Elected is the preferred
	// leader election after it.
	Took, Elected time.Duration
}

// reassignmentPlan is kafka-reassign-partitions.sh's JSON.
type reassignmentPlan struct {
	Version    int             `json:"version"`
	Partitions []partitionMove `json:"partitions"`
}

type partitionMove struct {
	Topic     string `json:"topic"`
	Partition int    `json:"partition"`
	Replicas  []int  `json:"replicas"`
	// gains and loses are the brokers the move adds and drops (not in the JSON).
	gains, loses []int
}

// changes are the partitions whose replica lists the proposal changes, and the log bytes copied to
// the brokers they gain (each partition's size as sizes gives it).
func changes(current, proposed reassignmentPlan, sizes map[int]int64) ([]partitionMove, int64) {
	held := map[int][]int{}
	for _, p := range current.Partitions {
		held[p.Partition] = p.Replicas
	}
	var out []partitionMove
	var bytes int64
	for _, p := range proposed.Partitions {
		p.gains, p.loses = minus(p.Replicas, held[p.Partition]), minus(held[p.Partition], p.Replicas)
		// A new order of the same replicas moves no data but names another preferred leader,
		// which the election after the moves makes the leader.
		if !slices.Equal(p.Replicas, held[p.Partition]) {
			out = append(out, p)
			bytes += int64(len(p.gains)) * sizes[p.Partition]
		}
	}
	return out, bytes
}

// batch splits moves into batches in which no broker gains or loses more than perBroker
// replicas, in order, as Cruise Control's executor bounds the movements into or out of each
// broker.
func batch(moves []partitionMove, perBroker int) [][]partitionMove {
	var out [][]partitionMove
	left := moves
	for len(left) > 0 {
		into, outOf := map[int]int{}, map[int]int{}
		var this, rest []partitionMove
		for _, m := range left {
			fits := true
			for _, b := range m.gains {
				fits = fits && into[b] < perBroker
			}
			for _, b := range m.loses {
				fits = fits && outOf[b] < perBroker
			}
			if !fits && len(this) > 0 {
				rest = append(rest, m)
				continue
			}
			for _, b := range m.gains {
				into[b]++
			}
			for _, b := range m.loses {
				outOf[b]++
			}
			this = append(this, m)
		}
		out, left = append(out, this), rest
	}
	return out
}

// minus is a's elements not in b.
func minus(a, b []int) []int {
	var out []int
	for _, x := range a {
		if !slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	return out
}

// Reassign spreads topic's partitions over every broker of the cluster, moving data at most
// throttle bytes per second per broker and at most perBroker partitions into or out of a broker
// at once (Cruise Control's concurrentPartitionMovementsPerBroker: each batch completes before
// the next begins), and waits up to within for the moves to complete and the preferred leaders to
// be elected. The tools run in from (the hub, which reaches every broker).
func (k *Kafka) Reassign(ctx context.Context, t testing.TB, from *netlab.Host, topic string, throttle int64, perBroker int,
	within time.Duration) Reassignment {
	t.Helper()
	dir := filepath.Join(k.dir, "reassign")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	topics := filepath.Join(dir, "topics.json")
	writeJSON(t, topics, map[string]any{"version": 1, "topics": []any{map[string]string{"topic": topic}}})
	ids := make([]string, len(k.Brokers))
	for i, b := range k.Brokers {
		ids[i] = strconv.Itoa(b.ID)
	}
	// --generate proposes over the brokers the cluster has registered, silently leaving out any
	// not registered yet (a new broker serves its metrics before Kafka has started): it is run
	// again until the proposal places replicas on every broker.
	var current, proposed reassignmentPlan
	var out string
	for start := time.Now(); ; time.Sleep(2 * time.Second) {
		out = k.tool(ctx, t, from, "org.apache.kafka.tools.reassign.ReassignPartitionsCommand", "--bootstrap-server", k.Bootstrap,
			"--topics-to-move-json-file", topics, "--broker-list", strings.Join(ids, ","), "--generate")
		current, proposed = proposal(t, out)
		if placesOn(proposed, k.Brokers) {
			break
		}
		if time.Since(start) > 3*time.Minute {
			t.Fatalf("kafka-reassign-partitions.sh --generate left brokers out of its proposal for 3 minutes (not registered?):\n%s", out)
		}
	}
	sizes := k.partitionSizes(ctx, t, from, topic)
	moves, bytes := changes(current, proposed, sizes)
	batches := batch(moves, perBroker)

	began := time.Now()
	deadline := began.Add(within)
	for i, b := range batches {
		plan := filepath.Join(dir, fmt.Sprintf("batch-%d.json", i))
		writeJSON(t, plan, reassignmentPlan{Version: 1, Partitions: b})
		k.tool(ctx, t, from, "org.apache.kafka.tools.reassign.ReassignPartitionsCommand", "--bootstrap-server", k.Bootstrap,
			"--reassignment-json-file", plan, "--execute", "--throttle", strconv.FormatInt(throttle, 10))
		for {
			// --verify also removes the throttles once the batch is complete.
			out = k.tool(ctx, t, from, "org.apache.kafka.tools.reassign.ReassignPartitionsCommand", "--bootstrap-server", k.Bootstrap,
				"--reassignment-json-file", plan, "--verify")
			if completed(out, len(b)) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the reassignment of %s over brokers %v (batch %d of %d) is not complete %s after it began:\n%s",
					topic, ids, i+1, len(batches), within, out)
			}
			time.Sleep(5 * time.Second)
		}
	}
	r := Reassignment{Moved: len(moves), Batches: len(batches), Bytes: bytes, Took: time.Since(began)}
	elect := time.Now()
	k.tool(ctx, t, from, "org.apache.kafka.tools.LeaderElectionCommand", "--bootstrap-server", k.Bootstrap,
		"--election-type", "PREFERRED", "--all-topic-partitions")
	r.Elected = time.Since(elect)
	return r
}

// partitionSizes is each partition's log size on its largest replica, from
// kafka-log-dirs.sh --describe (LogDirsCommand), whose JSON line lists every broker's log
// directories and their partitions ("<topic>-<partition>") with their sizes.
func (k *Kafka) partitionSizes(ctx context.Context, t testing.TB, from *netlab.Host, topic string) map[int]int64 {
	t.Helper()
	out := k.tool(ctx, t, from, "org.apache.kafka.tools.LogDirsCommand", "--bootstrap-server", k.Bootstrap,
		"--describe", "--topic-list", topic)
	var dirs struct {
		Brokers []struct {
			LogDirs []struct {
				Partitions []struct {
					Partition string `json:"partition"`
					Size      int64  `json:"size"`
				} `json:"partitions"`
			} `json:"logDirs"`
		} `json:"brokers"`
	}
	for _, line := range strings.Split(out, "\n") {
		if line = strings.TrimSpace(line); strings.HasPrefix(line, "{") {
			if err := json.Unmarshal([]byte(line), &dirs); err != nil {
				t.Fatalf("kafka-log-dirs.sh --describe: %v in %q", err, line)
			}
		}
	}
	sizes := map[int]int64{}
	for _, b := range dirs.Brokers {
		for _, d := range b.LogDirs {
			for _, p := range d.Partitions {
				i, err := strconv.Atoi(strings.TrimPrefix(p.Partition, topic+"-"))
				if err == nil && p.Size > sizes[i] {
					sizes[i] = p.Size
				}
			}
		}
	}
	return sizes
}

// placesOn says whether the plan puts replicas on every one of brokers.
func placesOn(plan reassignmentPlan, brokers []*Broker) bool {
	used := map[int]bool{}
	for _, p := range plan.Partitions {
		for _, r := range p.Replicas {
			used[r] = true
		}
	}
	for _, b := range brokers {
		if !used[b.ID] {
			return false
		}
	}
	return true
}

// completed says whether --verify reports every one of n partitions' reassignment completed
// ("Reassignment of partition %s is completed."); a partition still moving, or one whose
// replicas are not the plan's with no reassignment running, is not.
func completed(verify string, n int) bool {
	return strings.Count(verify, " is completed.") == n
}

// proposal reads --generate's output: the current assignment, then the proposed one, each a
// JSON line after its heading.
func proposal(t testing.TB, out string) (current, proposed reassignmentPlan) {
	t.Helper()
	var after string
	for _, line := range strings.Split(out, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(line, "Current partition replica assignment"):
			after = "current"
		case strings.HasPrefix(line, "Proposed partition reassignment configuration"):
			after = "proposed"
		case strings.HasPrefix(line, "{") && after != "":
			dst := &current
			if after == "proposed" {
				dst = &proposed
			}
			if err := json.Unmarshal([]byte(line), dst); err != nil {
				t.Fatalf("kafka-reassign-partitions.sh --generate: %v in %q", err, line)
			}
			after = ""
		}
	}
	if len(proposed.Partitions) == 0 {
		t.Fatalf("kafka-reassign-partitions.sh --generate proposed nothing:\n%s", out)
	}
	return current, proposed
}

// tool runs one of Kafka's command-line tools (its main class) in host and returns its output;
// a failure fails the test with it.
func (k *Kafka) tool(ctx context.Context, t testing.TB, host *netlab.Host, class string, args ...string) string {
	t.Helper()
	argv := append([]string{java(), "-Xms32m", "-Xmx256m", "-XX:+UseSerialGC", "-cp", classpath(t), class}, args...)
	if host != nil {
		argv = append([]string{"ip", "netns", "exec", host.NS}, argv...)
	}
	out, err := exec.CommandContext(ctx, argv[0], argv[1:]...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", class, strings.Join(args, " "), err, out)
	}
	return string(out)
}

func writeJSON(t testing.TB, path string, v any) {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}
