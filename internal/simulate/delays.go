package simulate

import (
	"fmt"
	"time"
)

// Delays are how long a change of the plan takes to carry load. The defaults follow what the
// upstream operators do; each can be overridden (strata simulate --delays FILE).
type Delays struct {
	// BrokerStart is from a larger broker KafkaNodePool to the new brokers running: Strimzi
	// creates their pods and Kafka starts and joins the cluster. New brokers take no traffic
	// until partitions are moved onto them.
	BrokerStart time.Duration `json:"brokerStart"`
	// RebalanceBytesPerSecond is how fast Cruise Control moves partition replicas in all when
	// brokers join or leave (Strimzi's auto-rebalance on scale-up and remove-brokers on
	// scale-down). 0, the default, means the throttle the operator's rebalance template sets
	// (desired.RebalanceThrottle: what the plan's traffic leaves of each broker's link), per
	// broker sending and per broker receiving.
	RebalanceBytesPerSecond int64 `json:"rebalanceBytesPerSecond"`
	// BrokerDataFraction is the share of each broker's log claim holding data that a rebalance
	// moves. 0.75: the plan keeps a broker's log under 75 % of the size its claim declares,
	// which Strimzi gives Cruise Control as the broker's disk (docs/storage-tiers.md), and a
	// pipeline that has run longer than its retention sits there. (`strata plan` counts what the
	// plan's own retention keeps at most, which is a little less: the 0.75 also holds the
	// writes of a retention check's interval.)
	BrokerDataFraction float64 `json:"brokerDataFraction"`
	// SparkResubmit is how long the job is down after a change of its executors or memory:
	// the Spark operator (kubeflow/spark-operator v2.5.2, internal/controller/
	// sparkapplication: a spec change sets INVALIDATING, deletes the driver and submits
	// again) stops it, then the new driver starts, asks for its executors and resumes from
	// its checkpoint.
	SparkResubmit time.Duration `json:"sparkResubmit"`
	// ExecutorStart is from a larger executor target to the new executors processing, for a
	// job that changes its executors in place (Strata's own job in the operator's image,
	// desired.ExecutorTarget): the driver reads the target every 5 s, Spark's Kubernetes
	// scheduler creates the pods, they start and register. Those running go on meanwhile; a
	// smaller target takes effect at once. Other jobs are resubmitted (SparkResubmit).
	ExecutorStart time.Duration `json:"executorStart"`
	// DataNodeStart is from a larger Elasticsearch nodeSet to the new data nodes indexing: ECK
	// creates the pods, Elasticsearch starts, joins, and shards are allocated to it.
	DataNodeStart time.Duration `json:"dataNodeStart"`
	// DataNodeDrain is how long a data node leaving takes: ECK first moves its shards away
	// (cloud-on-k8s v3.5.0, pkg/controller/elasticsearch/migration) and only then deletes it.
	// The node carries load, and costs, until then.
	DataNodeDrain time.Duration `json:"dataNodeDrain"`
}

// DefaultDelays are the delays of a typical cluster: pods on nodes that have their images,
// volumes that bind at once.
func DefaultDelays() Delays {
	return Delays{
		BrokerStart:        90 * time.Second,
		BrokerDataFraction: 0.75,
		SparkResubmit:      60 * time.Second,
		ExecutorStart:      30 * time.Second,
		DataNodeStart:      120 * time.Second,
		DataNodeDrain:      10 * time.Minute,
	}
}

// Validate refuses delays that make no sense, naming the field.
func (d Delays) Validate() error {
	for _, c := range []struct {
		name string
		v    time.Duration
	}{{"brokerStart", d.BrokerStart}, {"sparkResubmit", d.SparkResubmit}, {"executorStart", d.ExecutorStart},
		{"dataNodeStart", d.DataNodeStart}, {"dataNodeDrain", d.DataNodeDrain}} {
		if c.v < 0 || c.v > 24*time.Hour {
			return fmt.Errorf("delays.%s: %s: want from 0 to 24h", c.name, c.v)
		}
	}
	if d.RebalanceBytesPerSecond < 0 {
		return fmt.Errorf("delays.rebalanceBytesPerSecond: %d: want 0 (the links' spare capacity) or more", d.RebalanceBytesPerSecond)
	}
	if d.BrokerDataFraction < 0 || d.BrokerDataFraction > 1 {
		return fmt.Errorf("delays.brokerDataFraction: %g: want from 0 to 1", d.BrokerDataFraction)
	}
	return nil
}
