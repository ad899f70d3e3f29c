package pipeline

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/controllers/internal/status"
	"github.com/strata-dev/strata/internal/desired"
)

// setChildConditions sets KafkaReady, SparkReady and ElasticsearchReady from the children's own
// status, or from the missing CRDs, or NotReconciled for a child no operator has written a
// status on within timeout (pipeline_unreconciled.go); it returns when to look again for one
// that may become so (0: no need).
func setChildConditions(conds status.Conditions, p *v1alpha1.AnalyticsPipeline, missing []ChildKind, obs observed,
	now time.Time, timeout time.Duration) (recheck time.Duration) {
	// The object each condition reports on: the first of its chain not Ready.
	reported := map[string]func() *unstructured.Unstructured{
		v1alpha1.ConditionKafkaReady: func() *unstructured.Unstructured {
			for _, u := range []*unstructured.Unstructured{obs.get(desired.KafkaGVK, p.Namespace, desired.KafkaName(p)),
				obs.get(desired.KafkaTopicGVK, p.Namespace, desired.KafkaTopicName(p)),
				obs.get(desired.KafkaUserGVK, p.Namespace, desired.KafkaUserName(p))} {
				if ok, _ := readyCondition(u); !ok {
					return u
				}
			}
			return nil
		},
		v1alpha1.ConditionSparkReady: func() *unstructured.Unstructured {
			return obs.get(desired.SparkApplicationGVK, p.Namespace, desired.SparkApplicationName(p))
		},
		v1alpha1.ConditionElasticsearchReady: func() *unstructured.Unstructured {
			return obs.get(desired.ElasticsearchGVK, p.Namespace, desired.ElasticsearchName(p))
		},
	}
	statuses := map[string]func() childStatus{
		v1alpha1.ConditionKafkaReady: func() childStatus {
			return kafkaStatus(obs.get(desired.KafkaGVK, p.Namespace, desired.KafkaName(p)),
				obs.get(desired.KafkaTopicGVK, p.Namespace, desired.KafkaTopicName(p)),
				obs.get(desired.KafkaUserGVK, p.Namespace, desired.KafkaUserName(p)))
		},
		v1alpha1.ConditionSparkReady: func() childStatus {
			return sparkStatus(obs.get(desired.SparkApplicationGVK, p.Namespace, desired.SparkApplicationName(p)))
		},
		v1alpha1.ConditionElasticsearchReady: func() childStatus {
			return elasticsearchStatus(obs.get(desired.ElasticsearchGVK, p.Namespace, desired.ElasticsearchName(p)))
		},
	}
	for _, c := range []string{v1alpha1.ConditionKafkaReady, v1alpha1.ConditionSparkReady, v1alpha1.ConditionElasticsearchReady} {
		if msg := missingMessage(missing, c); msg != "" {
			conds.Set(c, metav1.ConditionFalse, v1alpha1.ReasonUpstreamCRDMissing, msg)
			continue
		}
		s := statuses[c]()
		if s.status != metav1.ConditionTrue {
			if nr, ok, after := notReconciled(reported[c](), now, timeout); ok {
				s = nr
			} else {
				recheck = sooner(recheck, after)
			}
		}
		conds.Set(c, s.status, s.reason, s.message)
	}
	return recheck
}

// setStorageCondition: every StorageTier the pipeline names exists and is Ready, and no claim of
// the pipeline's namespace is bound to one of their volumes on a lost node (a tier's
// status.lostClaims; claims are matched by namespace, as a tier does not know its claims' owners).
func setStorageCondition(conds status.Conditions, namespace string, tiers map[string]*v1alpha1.StorageTier, absent []string) {
	if len(absent) > 0 {
		conds.Set(v1alpha1.ConditionStorageReady, metav1.ConditionFalse, v1alpha1.ReasonTierNotFound,
			fmt.Sprintf("StorageTier %s not found", strings.Join(quoteAll(absent), ", ")))
		return
	}
	var lost []string
	for _, t := range tiers {
		for _, c := range t.Status.LostClaims {
			if strings.HasPrefix(c, namespace+"/") {
				lost = append(lost, fmt.Sprintf("%s (tier %s)", strings.TrimPrefix(c, namespace+"/"), t.Name))
			}
		}
	}
	if len(lost) > 0 {
		sort.Strings(lost)
		conds.Set(v1alpha1.ConditionStorageReady, metav1.ConditionFalse, v1alpha1.ReasonNodeLost,
			"claims bound to local volumes on a lost node (see the tier's VolumesLost condition): "+strings.Join(lost, ", "))
		return
	}
	var notReady []string
	for name, t := range tiers {
		if !meta.IsStatusConditionTrue(t.Status.Conditions, v1alpha1.ConditionReady) {
			notReady = append(notReady, name)
		}
	}
	sort.Strings(notReady)
	if len(notReady) > 0 {
		conds.Set(v1alpha1.ConditionStorageReady, metav1.ConditionFalse, v1alpha1.ReasonProgressing,
			fmt.Sprintf("StorageTier %s not Ready", strings.Join(quoteAll(notReady), ", ")))
		return
	}
	conds.Set(v1alpha1.ConditionStorageReady, metav1.ConditionTrue, v1alpha1.ReasonAvailable, "every StorageTier is Ready")
}

// setDurabilityCondition says what a broker's loss can cost: with min.insync.replicas m, Kafka
// acknowledges an acks=all write once m brokers hold it, so it survives the loss of m−1 brokers'
// volumes. At 1 (asked for, or a replication factor of 1) it survives none: on local NVMe a
// node's loss takes acknowledged writes with it.
func setDurabilityCondition(conds status.Conditions, spec v1alpha1.KafkaSpec, pl v1alpha1.Plan) {
	m := pl.MinInSyncReplicas
	if m < 2 {
		why := "spec.kafka.minInSyncReplicas is 1"
		if pl.ReplicationFactor < 2 {
			why = "spec.kafka.replicationFactor is 1"
		}
		conds.Set(v1alpha1.ConditionKafkaDurable, metav1.ConditionFalse, v1alpha1.ReasonSingleCopyWrites,
			why+": Kafka acknowledges a write stored on the partition leader alone, so losing that "+
				"broker's volume (its disk, or its node with a local volume) loses acknowledged writes")
		return
	}
	msg := fmt.Sprintf("min.insync.replicas %d of replication factor %d: an acknowledged write is on at "+
		"least %d brokers and survives the loss of %d broker volume(s)", m, pl.ReplicationFactor, m, m-1)
	if spec.MinInSyncReplicas != nil {
		msg += " (set by spec.kafka.minInSyncReplicas)"
	}
	if m == pl.ReplicationFactor {
		msg += "; producers using acks=all are refused for a partition while any of its brokers is down"
	}
	conds.Set(v1alpha1.ConditionKafkaDurable, metav1.ConditionTrue, v1alpha1.ReasonReplicatedWrites, msg)
}

// setReadyCondition sums the other conditions up: Ready is True only when all of them are.
// PodsScheduled comes before the children's: a pod the scheduler cannot place is why its child
// is not ready, and Ready's message then names it rather than the child's health.
func setReadyCondition(conds status.Conditions) {
	for _, c := range []string{v1alpha1.ConditionPlanValid, v1alpha1.ConditionStorageReady,
		v1alpha1.ConditionPodsScheduled, v1alpha1.ConditionKafkaReady, v1alpha1.ConditionSparkReady, v1alpha1.ConditionElasticsearchReady} {
		cond := meta.FindStatusCondition(*conds.List, c)
		if cond == nil || cond.Status != metav1.ConditionTrue {
			reason, msg := v1alpha1.ReasonProgressing, c+" is not yet known"
			if cond != nil {
				reason, msg = cond.Reason, c+": "+cond.Message
			}
			conds.Set(v1alpha1.ConditionReady, metav1.ConditionFalse, reason, msg)
			return
		}
	}
	conds.Set(v1alpha1.ConditionReady, metav1.ConditionTrue, v1alpha1.ReasonAvailable, "the pipeline runs as planned")
}

func quoteAll(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = fmt.Sprintf("%q", n)
	}
	return out
}
