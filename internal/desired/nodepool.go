package desired

import (
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/internal/plan"
)

// ControllerVolumeSize is the size of each KRaft controller's volume: it holds only the
// cluster metadata log, which stays small. An estimate, used when the plan has no controller
// volume; spec.kafka.controllers.storage.size sets the planned one.
var ControllerVolumeSize = resource.MustParse("10Gi")

// NodePools builds p's two KafkaNodePools (kafka.strimzi.io/v1), controller pool first; they
// join the cluster through the strimzi.io/cluster label.
//
//   - "<pipeline>-controller": the KRaft quorum, roles [controller], of the size the plan
//     records (ControllerReplicas): chosen when the cluster is created and never changed, since
//     Strimzi runs only static quorums.
//   - "<pipeline>-broker": roles [broker], replicas = the plan's broker count. The autoscaler changes
//     only this number; Strimzi's auto-rebalance moves partitions on and off the brokers.
//
// Both use JBOD with one persistent-claim volume that also holds the KRaft metadata log
// (kraftMetadata: shared), as Strimzi's own examples do, so that disks can be added later
// (a pool's storage type cannot be changed). The brokers' volumes use the Kafka log tier's
// StorageClass, the controllers' spec.kafka.controllers.storage (by default the cluster's
// default StorageClass); deleteClaim follows spec.volumeReclaimPolicy. A pool whose volume is on
// a local tier gets node affinity to the tier's nodes (tierAffinity) in template.pod.affinity;
// Strimzi keeps it and, for brokers with rack awareness, adds its own requirement (the rack
// label exists) to each of its node selector terms (strimzi-kafka-operator 1.2.0,
// cluster-operator/src/main/java/io/strimzi/operator/cluster/model/ModelUtils.java,
// affinityWithRackLabelSelector, called from KafkaCluster.java for every pool's pods).
func NodePools(in Inputs) []*unstructured.Unstructured {
	p := in.Pipeline
	log, _ := placement(in.Plan, v1alpha1.RoleKafkaLog)
	brokerSize := p.Spec.Kafka.Storage.Size
	if !log.SizePerReplica.IsZero() {
		brokerSize = log.SizePerReplica
	}
	ctrlSize, ctrlClass := metadataVolume(in.Plan, v1alpha1.RoleKafkaController, ControllerVolumeSize)
	ctrl := nodePool(p, ControllerPoolName(p), ComponentKafkaController, ControllerReplicas(in.Plan),
		ctrlSize, ctrlClass, tierAffinity(in, metadataTier(in.Plan, v1alpha1.RoleKafkaController)))
	broker := nodePool(p, BrokerPoolName(p), ComponentKafkaBroker, max(int64(in.Plan.Brokers), 0),
		brokerSize, log.StorageClassName, tierAffinity(in, log.Tier))
	poolResources(ctrl, in.Plan, v1alpha1.RoleKafkaController)
	poolResources(broker, in.Plan, v1alpha1.RoleKafkaBroker)
	return []*unstructured.Unstructured{ctrl, broker}
}

// poolResources sets a pool's planned resources and heap. Without them Strimzi runs Kafka
// BestEffort with -Xms128M and no maximum heap; with a memory limit but no -Xmx it would take
// half the memory, at most 5 GB, for the heap (strimzi-kafka-operator 1.2.0,
// documentation/modules/con-common-configuration-properties.adoc, "-Xms and -Xmx options"). The
// plan keeps the heap small and fixed (-Xms = -Xmx) so that the rest of the limit is the page
// cache of the log, which Strimzi's documentation asks the memory request to fit. The CPU is
// requested, not limited: Cruise Control reads the request (or brokerCapacity.cpu, see Kafka).
func poolResources(pool *unstructured.Unstructured, plan v1alpha1.Plan, role string) {
	r, ok := podResources(plan, role)
	if !ok {
		return
	}
	xms, xmx := heapOptions(r)
	_ = unstructured.SetNestedField(pool.Object, containerResources(r, false), "spec", "resources")
	_ = unstructured.SetNestedField(pool.Object, object{"-Xms": xms, "-Xmx": xmx}, "spec", "jvmOptions")
}

// ControllerReplicas is the size of the KRaft controller quorum: the plan's KafkaController
// metadata volumes, one per controller (plan.KRaftQuorum when the cluster was created, the
// running quorum after). A plan without them (built by hand) gets plan.KRaftQuorum's rule.
func ControllerReplicas(pl v1alpha1.Plan) int64 {
	for _, v := range pl.MetadataVolumes {
		if v.Role == v1alpha1.RoleKafkaController && v.Replicas > 0 {
			return int64(v.Replicas)
		}
	}
	return int64(plan.KRaftQuorum(pl.Brokers))
}

func nodePool(p *v1alpha1.AnalyticsPipeline, name, component string, replicas int64,
	size resource.Quantity, storageClass string, affinity object) *unstructured.Unstructured {
	role := "broker"
	if component == ComponentKafkaController {
		role = "controller"
	}
	volume := object{
		"id":            int64(0),
		"type":          "persistent-claim",
		"size":          size.String(),
		"kraftMetadata": "shared",
		"deleteClaim":   deleteVolumes(p),
	}
	if storageClass != "" {
		volume["class"] = storageClass
	}
	// Strimzi adds the template's labels to its pods' (PodLabels); the component names the
	// workload (kafka-controller, kafka-broker).
	pod := object{"metadata": podMetadata(p, component), "topologySpreadConstraints": poolSpread(p, name)}
	if affinity != nil {
		pod["affinity"] = affinity
	}
	spec := object{
		"replicas": replicas,
		"roles":    []any{role},
		"storage":  object{"type": "jbod", "volumes": []any{volume}},
		"template": object{"pod": pod},
	}
	return newObject(KafkaNodePoolGVK, p, name, AppKafka, component,
		map[string]string{StrimziClusterLabel: KafkaName(p)}, nil, object{"spec": spec})
}

// poolSpread spreads a pool's pods over nodes, and over the failure domains of
// spec.kafka.rackTopologyKey. Strimzi's rack awareness (spec.kafka.rack) only gives the brokers
// node affinity to nodes carrying the label and tells Kafka each broker's rack; it does not
// spread the pods (strimzi-kafka-operator 1.2.0, documentation/modules/configuring/
// proc-scheduling-brokers-on-different-worker-nodes.adoc: spreading is the pod template's
// job, selecting a pool's pods by strimzi.io/pool-name, operator-common/.../model/Labels.java).
// Two brokers on one node lose both replicas of a partition together, two controllers the
// quorum. Over nodes the constraint is hard (DoNotSchedule): with maxSkew 1 it still schedules
// more pods than nodes, but never piles them on one node while another has fewer. It counts
// only the nodes the pods may run on (spreadConstraint's Honor policies, placement.go): tainted
// nodes the pods do not tolerate, and on a local tier the nodes without its disks (the pool's
// tierAffinity), would otherwise count as empty nodes and keep pods Pending that good nodes have
// room for. Over a coarser failure domain it is soft (ScheduleAnyway): on a local tier, pods can
// only run where the disks are, and the domains need not be balanced.
func poolSpread(p *v1alpha1.AnalyticsPipeline, pool string) []any {
	selector := object{StrimziClusterLabel: KafkaName(p), StrimziPoolLabel: pool}
	out := []any{spreadConstraint(HostnameTopologyKey, DoNotSchedule, selector)}
	if key := rackTopologyKey(p); key != "" && key != HostnameTopologyKey {
		out = append(out, spreadConstraint(key, ScheduleAnyway, selector))
	}
	return out
}
