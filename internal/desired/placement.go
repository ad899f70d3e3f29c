package desired

import (
	"sort"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/strata-dev/strata/api/v1alpha1"
)

// Where the pods of Kafka, Elasticsearch and Spark may run: the topology spread constraints
// of the Kafka node pools and the Elasticsearch nodeSets, and the node affinity that keeps pods
// whose volumes are on a local tier on that tier's nodes.
//
// The scheduler's PodTopologySpread counts, for each constraint, the pods it selects in every
// domain of the topology key, over the nodes the constraint's inclusion policies admit
// (kubernetes v1.36.3, pkg/scheduler/framework/plugins/podtopologyspread/common.go,
// matchNodeInclusionPolicies):
//   - nodeTaintsPolicy defaults to Ignore: a node whose taints the pod does not tolerate (a
//     control-plane node, a node being drained) still counts, as a domain holding none of the
//     pods. With maxSkew 1 and DoNotSchedule, once every good node holds one pod, the next pod
//     would make the skew 2 against that empty domain and stays Pending although the good
//     nodes have room. Honor leaves such nodes out;
//   - nodeAffinityPolicy Honor (the default, spelled out so that nothing depends on it) counts
//     only the nodes matching the pod's node affinity. A local volume's node affinity is not the
//     pod's: without node affinity of their own, pods on a local tier would count every node,
//     those without the tier's disks too, as empty domains they can never fill. tierAffinity
//     gives them the tier's nodes as required node affinity, so the spread counts only nodes
//     that can host them.
//
// Both policies are set on every constraint Strata writes (spreadConstraint).

// The values of whenUnsatisfiable and of the inclusion policies.
const (
	DoNotSchedule  = "DoNotSchedule"
	ScheduleAnyway = "ScheduleAnyway"
	PolicyHonor    = "Honor"
)

// spreadConstraint is a topology spread constraint over key, maxSkew 1, of the pods matchLabels
// selects, counting only the nodes that the pod tolerates and that match its node affinity.
func spreadConstraint(key, whenUnsatisfiable string, matchLabels object) object {
	return object{
		"maxSkew":            int64(1),
		"topologyKey":        key,
		"whenUnsatisfiable":  whenUnsatisfiable,
		"labelSelector":      object{"matchLabels": matchLabels},
		"nodeTaintsPolicy":   PolicyHonor,
		"nodeAffinityPolicy": PolicyHonor,
	}
}

// tierAffinity is the node affinity of pods whose volumes are on the named tiers: required
// scheduling on nodes that every local one among them selects (spec.local.nodeSelector), since
// those nodes alone have the disks; nil when no tier is local (or known: Inputs.Tiers), or when
// the local tiers select every node. The selectors become one node selector term whose
// requirements are all required together: matchLabels as In with the one value,
// matchExpressions as they are (the API admits only In, NotIn, Exists and DoesNotExist, which
// node selectors share). The scheduler's VolumeBinding already keeps such pods off nodes without
// a free volume; this affinity is what tells PodTopologySpread (nodeAffinityPolicy: Honor).
func tierAffinity(in Inputs, tiers ...string) object {
	var reqs []any
	seen := map[string]bool{}
	for _, name := range tiers {
		sel := localSelector(in, name)
		if sel == nil {
			continue
		}
		for _, r := range nodeSelectorRequirements(*sel) {
			if k := requirementKey(r); !seen[k] {
				seen[k] = true
				reqs = append(reqs, r)
			}
		}
	}
	if len(reqs) == 0 {
		// An empty term would match no node at all; a selector of every node needs none.
		return nil
	}
	return object{"nodeAffinity": object{"requiredDuringSchedulingIgnoredDuringExecution": object{
		"nodeSelectorTerms": []any{object{"matchExpressions": reqs}},
	}}}
}

// localSelector is the node selector of the named tier when it is a local tier of in.Tiers.
func localSelector(in Inputs, name string) *metav1.LabelSelector {
	if name == "" {
		return nil
	}
	for i := range in.Tiers {
		if t := &in.Tiers[i]; t.Name == name && t.Spec.Local != nil {
			return &t.Spec.Local.NodeSelector
		}
	}
	return nil
}

// nodeSelectorRequirements turns a label selector into node selector requirements: matchLabels
// in key order, then matchExpressions in their order.
func nodeSelectorRequirements(sel metav1.LabelSelector) []object {
	keys := make([]string, 0, len(sel.MatchLabels))
	for k := range sel.MatchLabels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]object, 0, len(keys)+len(sel.MatchExpressions))
	for _, k := range keys {
		out = append(out, object{"key": k, "operator": string(metav1.LabelSelectorOpIn),
			"values": []any{sel.MatchLabels[k]}})
	}
	for _, e := range sel.MatchExpressions {
		r := object{"key": e.Key, "operator": string(e.Operator)}
		if len(e.Values) > 0 {
			values := make([]any, len(e.Values))
			for i, v := range e.Values {
				values[i] = v
			}
			r["values"] = values
		}
		out = append(out, r)
	}
	return out
}

// requirementKey identifies a requirement, so that two tiers selecting alike add it once.
func requirementKey(r object) string {
	k := r["key"].(string) + "\x00" + r["operator"].(string)
	values, _ := r["values"].([]any)
	for _, v := range values {
		k += "\x00" + v.(string)
	}
	return k
}

// metadataTier is the tier of a role's metadata volumes; empty for the cluster's default
// StorageClass.
func metadataTier(plan v1alpha1.Plan, role string) string {
	for _, v := range plan.MetadataVolumes {
		if v.Role == role {
			return v.Tier
		}
	}
	return ""
}
