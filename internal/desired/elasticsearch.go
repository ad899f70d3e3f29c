package desired

import (
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/strata-dev/strata/api/v1alpha1"
)

// Elasticsearch nodeSet names; ECK names their pods <es>-es-<nodeSet>-<n>.
const (
	MasterNodeSet = "master"
	DataNodeSet   = "data"
)

// MasterVolumeSize is the size of each dedicated master's volume: masters keep only the
// cluster state. An estimate, used when the plan has no master volume;
// spec.elasticsearch.masters.storage.size sets the planned one.
var MasterVolumeSize = resource.MustParse("10Gi")

// ECK's volumeClaimDeletePolicy values.
const (
	DeleteOnScaledownOnly               = "DeleteOnScaledownOnly"
	DeleteOnScaledownAndClusterDeletion = "DeleteOnScaledownAndClusterDeletion"
)

// exposedNodeLabelPrefixes are the node labels ECK's operator exposes to pods by default (its
// exposed-node-labels flag); ECK's zoneAwareness needs the topology key to be one of them.
var exposedNodeLabelPrefixes = []string{"topology.kubernetes.io/", "failure-domain.beta.kubernetes.io/"}

// Elasticsearch builds p's ECK Elasticsearch cluster (elasticsearch.k8s.elastic.co/v1) with two
// nodeSets: "master" (spec.elasticsearch.masterNodes dedicated masters on small volumes) and
// "data" (the plan's data nodes, roles data and ingest, each with an elasticsearch-data claim on
// the Elasticsearch tier's StorageClass and size).
//
// Spreading (esSpread); every constraint, maxSkew 1, counts only the nodes the pods may run on
// (the Honor policies of spreadConstraint, placement.go):
//   - the masters over nodes, DoNotSchedule: they are the quorum, and two on one node lose it
//     together (with only ECK's preferred anti-affinity and a soft constraint, the scheduler put
//     all three on one node). With maxSkew 1 they still schedule where fewer nodes are eligible
//     than masters, two on a node only once every node has one;
//   - both nodeSets over the failure domains of spec.kafka.rackTopologyKey (shared with Kafka),
//     ScheduleAnyway (for the masters in addition, when the key is not the hostname). Not
//     DoNotSchedule: on a local tier, data nodes can only run where the tier's disks are, and
//     the plan's node count need not match the failure domains; a hard constraint would leave
//     pods Pending where a soft one only spreads less evenly, and shard placement (below) still
//     keeps a shard's copies apart;
//   - shard allocation awareness: ECK already makes Elasticsearch keep a shard's copies on
//     different Kubernetes nodes (attribute k8s_node_name), which covers the default key
//     kubernetes.io/hostname. For a zone key ECK exposes to pods by default (topology.
//     kubernetes.io/*), both nodeSets also get ECK's zoneAwareness, which sets node.attr.zone
//     and the awareness attributes, and requires the zone label on the pods' nodes; ECK adds
//     its own (DoNotSchedule) constraint for that key only where the template has none, so it
//     keeps the one given here (cloud-on-k8s 3.5.0, pkg/controller/elasticsearch/nodespec/
//     podspec.go, zoneAwarenessSchedulingDirectives; pkg/controller/common/defaults/
//     pod_template.go, WithTopologySpreadConstraints). Other keys get the spread constraint only.
//
// A nodeSet whose volumes are on a local tier gets node affinity to the tier's nodes
// (tierAffinity) in its pod template; ECK adds its zone requirement to that node selector term
// (WithRequiredNodeAffinityMatchExpressions). ECK then leaves out its default affinity, a
// preferred pod anti-affinity over kubernetes.io/hostname (pod_template.go, WithAffinity sets
// it only on a template without one; nodespec/defaults.go, DefaultAffinity): the spread
// constraints above do its work.
//
// volumeClaimDeletePolicy follows spec.volumeReclaimPolicy: Retain keeps the data volumes when
// the cluster is deleted (DeleteOnScaledownOnly), Delete removes them with it.
func Elasticsearch(in Inputs) *unstructured.Unstructured {
	p := in.Pipeline
	es := p.Spec.Elasticsearch
	version := es.Version
	if version == "" {
		version = DefaultESVersion
	}
	masters := int64(es.MasterNodes)
	if masters <= 0 {
		masters = DefaultESMasterNodes
	}
	data, _ := placement(in.Plan, v1alpha1.RoleElasticsearchData)
	dataSize := es.Storage.Size
	if !data.SizePerReplica.IsZero() {
		dataSize = data.SizePerReplica
	}
	masterSize, masterClass := metadataVolume(in.Plan, v1alpha1.RoleElasticsearchMaster, MasterVolumeSize)
	policy := DeleteOnScaledownOnly
	if deleteVolumes(p) {
		policy = DeleteOnScaledownAndClusterDeletion
	}
	spec := object{
		"version":                 version,
		"volumeClaimDeletePolicy": policy,
		"auth":                    ElasticsearchAuth(p), // the job's own user (elasticsearchuser.go)
		"nodeSets": []any{
			nodeSet(p, MasterNodeSet, masters, []any{"master"}, masterSize, masterClass,
				esContainer(in.Plan, v1alpha1.RoleElasticsearchMaster), WorkloadElasticsearchMaster,
				tierAffinity(in, metadataTier(in.Plan, v1alpha1.RoleElasticsearchMaster))),
			nodeSet(p, DataNodeSet, max(int64(in.Plan.ElasticsearchDataNodes), 1), []any{"data", "ingest"},
				dataSize, data.StorageClassName, esContainer(in.Plan, v1alpha1.RoleElasticsearchData), WorkloadElasticsearchData,
				tierAffinity(in, data.Tier)),
		},
	}
	return newObject(ElasticsearchGVK, p, ElasticsearchName(p), AppElasticsearch, ComponentElasticsearch,
		nil, nil, object{"spec": spec})
}

// esContainer is the Elasticsearch container of a nodeSet's pod template: ECK merges it, by
// name, into the container it builds (image, ports, and by default 2Gi of memory: cloud-on-k8s
// 3.5.0, pkg/controller/elasticsearch/nodespec/defaults.go). With the plan's resources it gets
// CPU and memory requested and limited alike (Elasticsearch sizes its thread pools to the CPU
// limit it sees), and the heap as ES_JAVA_OPTS, the way ECK's own sample sets both
// (config/samples/elasticsearch/elasticsearch.yaml): half the memory at most, the rest for
// Elasticsearch's off-heap buffers and the filesystem cache.
func esContainer(plan v1alpha1.Plan, role string) object {
	c := object{"name": "elasticsearch"}
	if r, ok := podResources(plan, role); ok {
		xms, xmx := heapOptions(r)
		c["resources"] = containerResources(r, true)
		c["env"] = []any{object{"name": "ES_JAVA_OPTS", "value": "-Xms" + xms + " -Xmx" + xmx}}
	}
	return c
}

func nodeSet(p *v1alpha1.AnalyticsPipeline, name string, count int64, roles []any,
	size resource.Quantity, storageClass string, container object, workload string, affinity object) object {
	key := esTopologyKey(p)
	claim := object{
		"accessModes": []any{"ReadWriteOnce"},
		"resources":   object{"requests": object{"storage": size.String()}},
	}
	if storageClass != "" {
		claim["storageClassName"] = storageClass
	}
	config := object{"node.roles": roles}
	podSpec := object{
		// The CRD requires a container list; ECK merges this entry, by name, into the
		// Elasticsearch container it builds (esContainer).
		"containers":                []any{container},
		"topologySpreadConstraints": esSpread(p, name),
	}
	if affinity != nil {
		podSpec["affinity"] = affinity
	}
	virtualMemory(p, config, podSpec)
	set := object{
		"name":   name,
		"count":  count,
		"config": config,
		// ECK keeps the template's labels on the pods (PodLabels).
		"podTemplate": object{"metadata": podMetadata(p, workload), "spec": podSpec},
		"volumeClaimTemplates": []any{object{
			"metadata": object{"name": ElasticsearchDataVolume},
			"spec":     claim,
		}},
	}
	if zoneAware(key) {
		set["zoneAwareness"] = object{"topologyKey": key}
	}
	return set
}

// esTopologyKey is the failure domains' node label; kubernetes.io/hostname when rack awareness
// is off.
func esTopologyKey(p *v1alpha1.AnalyticsPipeline) string {
	if key := rackTopologyKey(p); key != "" {
		return key
	}
	return HostnameTopologyKey
}

// esSpread is a nodeSet's topology spread constraints, selecting its pods by ECK's labels: see
// Elasticsearch.
func esSpread(p *v1alpha1.AnalyticsPipeline, nodeSet string) []any {
	selector := object{
		"elasticsearch.k8s.elastic.co/cluster-name":     ElasticsearchName(p),
		"elasticsearch.k8s.elastic.co/statefulset-name": ElasticsearchStatefulSetName(p, nodeSet),
	}
	key := esTopologyKey(p)
	if nodeSet != MasterNodeSet {
		return []any{spreadConstraint(key, ScheduleAnyway, selector)}
	}
	out := []any{spreadConstraint(HostnameTopologyKey, DoNotSchedule, selector)}
	if key != HostnameTopologyKey {
		out = append(out, spreadConstraint(key, ScheduleAnyway, selector))
	}
	return out
}

// zoneAware says whether ECK's zoneAwareness can use key: ECK must be able to copy the node
// label onto the pods, which its default installation allows for the well-known topology
// labels only.
func zoneAware(key string) bool {
	for _, prefix := range exposedNodeLabelPrefixes {
		if strings.HasPrefix(key, prefix) {
			return true
		}
	}
	return false
}

// virtualMemory meets Elasticsearch's bootstrap check of vm.max_map_count (at least 262144;
// Kubernetes nodes default to 65530) as spec.elasticsearch.virtualMemory says, the three ways
// ECK documents (https://www.elastic.co/docs/deploy-manage/deploy/cloud-on-k8s/virtual-memory,
// "Virtual memory"): memory mapping off, a privileged init container that raises the node's
// setting, or nodes configured beforehand.
func virtualMemory(p *v1alpha1.AnalyticsPipeline, config, podSpec object) {
	switch p.Spec.Elasticsearch.VirtualMemory {
	case "NodeConfigured":
	case "SysctlInitContainer":
		podSpec["initContainers"] = []any{object{
			"name":            "sysctl",
			"securityContext": object{"privileged": true, "runAsUser": int64(0)},
			"command":         []any{"sh", "-c", "sysctl -w vm.max_map_count=262144"},
		}}
	default: // MMapOff
		config["node.store.allow_mmap"] = false
	}
}
