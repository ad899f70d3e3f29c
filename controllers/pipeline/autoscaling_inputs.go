package pipeline

import (
	"context"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/controllers/internal/status"
	"github.com/strata-dev/strata/internal/autoscale"
	"github.com/strata-dev/strata/internal/desired"
)

// What the pipeline reconciler reads of the autoscaling controller's work, and what it reads of
// the cluster for it (controllers/autoscaling's Cluster, which Reconciler satisfies): the two
// share no memory, only the pipeline's status.autoscaling and the caches' view of its children.

// autoscale returns the autoscaler's targets to plan with (plan.Observed.Autoscaling; nil: the
// spec as it is), as the autoscaling controller (controllers/autoscaling) wrote them to
// status.autoscaling. With autoscaling off it removes the autoscaler's status and condition:
// the spec says so, and the autoscaling controller writes nothing for such a pipeline.
func (r *Reconciler) autoscale(p *v1alpha1.AnalyticsPipeline, conds status.Conditions) *v1alpha1.AutoscalingStatus {
	if spec := p.Spec.Autoscaling; spec == nil || !spec.Enabled {
		p.Status.Autoscaling = nil
		conds.Remove(v1alpha1.ConditionAutoscaling)
		return nil
	}
	return p.Status.Autoscaling
}

// policy is what Recommend decides with (autoscale.NewPolicy), with what Strimzi and the Spark
// operator report now.
func policy(p *v1alpha1.AnalyticsPipeline, base v1alpha1.Plan, obs observed, safety autoscale.BrokerSafety) autoscale.Policy {
	app := obs.get(desired.SparkApplicationGVK, p.Namespace, desired.SparkApplicationName(p))
	return autoscale.NewPolicy(p, base, safety, sparkStatus(app).status == metav1.ConditionTrue)
}

// brokerSafety is whether brokers may leave now, as Strimzi reports it on the Kafka, the broker
// pool and the cluster's KafkaRebalances; when the KafkaRebalances cannot be listed, that is
// unknown, and unknown holds a scale-down back.
func (r *Reconciler) brokerSafety(ctx context.Context, p *v1alpha1.AnalyticsPipeline, obs observed,
	served []schema.GroupVersionKind) autoscale.BrokerSafety {
	rebalances, err := r.rebalances(ctx, p, served)
	if err != nil {
		log.FromContext(ctx).Error(err, "listing KafkaRebalances; broker scale-downs wait")
		return autoscale.SafetyUnknown("listing the cluster's KafkaRebalances failed: " + err.Error())
	}
	// The pipeline's own remove-brokers KafkaRebalance (desired.BrokerRemoval) is the step that
	// empties the last broker but one, not something that step waits for: counted here, it
	// held its own emptying back while Strimzi ran it (PendingProposal, Rebalancing) or had
	// refused it (NotReady), the plan stopped asking for it and the prune deleted it, and the
	// next reconcile made it again: created and deleted 3,169 times in four minutes under the
	// real Strimzi (internal/upstream, TestStrimziRunsTheSample), and on a real cluster every
	// such rebalance stopped before it moved a replica. Its own state is read apart
	// (observedCluster: Emptied, RemovalState), from the same snapshot of the reconcile as here,
	// so that the autoscaler's gate and the plan's RemovalRunning cannot disagree.
	removal := desired.BrokerRemovalName(p)
	rebalances = slices.DeleteFunc(rebalances, func(rb *unstructured.Unstructured) bool {
		return rb.GetName() == removal
	})
	s := autoscale.StrimziSafety(obs.get(desired.KafkaGVK, p.Namespace, desired.KafkaName(p)),
		obs.get(desired.KafkaNodePoolGVK, p.Namespace, desired.BrokerPoolName(p)), rebalances)
	if why := removalUnderWay(obs.get(desired.KafkaRebalanceGVK, p.Namespace, removal)); why != "" {
		s.Leaving, s.LeavingWhy = max(s.Leaving, 1), why
	}
	return s
}

// removalUnderWay says what the pipeline's own remove-brokers KafkaRebalance is doing while
// Cruise Control empties the last broker but one with it ("" when it is not under way). The
// autoscaler asks for no broker back until it ends (autoscale.BrokerSafety.Leaving): the plan
// would stop asking for it and the prune delete it, but Strimzi does not stop a KafkaRebalance
// that is deleted (KafkaRebalanceAssemblyOperator.reconcileKafkaRebalance at 1.2.0 only logs
// the deletion; stopExecution is called for the strimzi.io/rebalance stop and refresh
// annotations alone), so Cruise Control would empty the broker the pool then keeps.
func removalUnderWay(rb *unstructured.Unstructured) string {
	if rb == nil {
		return ""
	}
	for _, c := range autoscale.RebalanceConditions(rb) {
		if c.Running() {
			return fmt.Sprintf("KafkaRebalance %s is %s", rb.GetName(), c.Type)
		}
	}
	return ""
}

// rebalances lists the KafkaRebalances of the pipeline's Kafka cluster, the ones Strimzi's
// auto-rebalance creates included (they carry the strimzi.io/cluster label, not ours); none when
// the API server serves no KafkaRebalance.
func (r *Reconciler) rebalances(ctx context.Context, p *v1alpha1.AnalyticsPipeline,
	served []schema.GroupVersionKind) ([]*unstructured.Unstructured, error) {
	if !slices.Contains(served, desired.KafkaRebalanceGVK) {
		return nil, nil
	}
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(desired.KafkaRebalanceGVK.GroupVersion().WithKind("KafkaRebalanceList"))
	opts := []client.ListOption{client.InNamespace(p.Namespace), client.MatchingLabels{desired.StrimziClusterLabel: desired.KafkaName(p)}}
	if r.watches.clusterIndexedKind(desired.KafkaRebalanceGVK) {
		// The cache answers from its index: this cluster's KafkaRebalances only (watches.go).
		opts = append(opts, client.MatchingFields{clusterIndex: desired.KafkaName(p)})
	}
	if err := r.Client.List(ctx, list, opts...); err != nil {
		return nil, err
	}
	out := make([]*unstructured.Unstructured, len(list.Items))
	for i := range list.Items {
		out[i] = &list.Items[i]
	}
	return out, nil
}

// tierList is the pipeline's tiers as plan.Compute takes them.
func tierList(p *v1alpha1.AnalyticsPipeline, tiers map[string]*v1alpha1.StorageTier) []v1alpha1.StorageTier {
	list := make([]v1alpha1.StorageTier, 0, len(tiers))
	for _, name := range tierNames(p) {
		if t, ok := tiers[name]; ok {
			list = append(list, *t)
		}
	}
	return list
}

// autoscalingWritten passes the pipeline updates the pipeline reconciler must act on after the
// autoscaling controller wrote: new targets (counts, measured rate, memory split) to plan with,
// or a new Autoscaling condition for the pipeline's metrics. A reading that changed only its
// windows' times or the intake's readings passes nothing.
var autoscalingWritten = predicate.Funcs{
	UpdateFunc: func(e event.UpdateEvent) bool {
		old, ok1 := e.ObjectOld.(*v1alpha1.AnalyticsPipeline)
		cur, ok2 := e.ObjectNew.(*v1alpha1.AnalyticsPipeline)
		if !ok1 || !ok2 {
			return false
		}
		return !equality.Semantic.DeepEqual(targets(old.Status.Autoscaling), targets(cur.Status.Autoscaling)) ||
			!sameCondition(meta.FindStatusCondition(old.Status.Conditions, v1alpha1.ConditionAutoscaling),
				meta.FindStatusCondition(cur.Status.Conditions, v1alpha1.ConditionAutoscaling))
	},
	CreateFunc:  func(event.CreateEvent) bool { return false },
	DeleteFunc:  func(event.DeleteEvent) bool { return false },
	GenericFunc: func(event.GenericEvent) bool { return false },
}

// targets is what of status.autoscaling the plan uses (plan.Observed.Autoscaling): not the
// windows, the last decision's record or the intake's readings, which every reading rewrites.
func targets(st *v1alpha1.AutoscalingStatus) *v1alpha1.AutoscalingStatus {
	if st == nil {
		return nil
	}
	t := st.DeepCopy()
	t.Windows, t.LastDecision, t.Readings = nil, nil, nil
	return t
}

func sameCondition(a, b *metav1.Condition) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Status == b.Status && a.Reason == b.Reason && a.Message == b.Message
}

// TierList returns the StorageTiers p names, as plan.Compute takes them (the autoscaling
// controller plans its base with them).
func (r *Reconciler) TierList(ctx context.Context, p *v1alpha1.AnalyticsPipeline) ([]v1alpha1.StorageTier, error) {
	tiers, _, err := r.tiers(ctx, p)
	if err != nil {
		return nil, err
	}
	return tierList(p, tiers), nil
}

// Policy is what the autoscaling controller's Recommend decides with: the base plan, whether
// brokers may leave (brokerSafety) and whether the job runs, from the children as the cache
// has them.
func (r *Reconciler) Policy(ctx context.Context, p *v1alpha1.AnalyticsPipeline, base v1alpha1.Plan) (autoscale.Policy, error) {
	missing, err := missingKinds(r.Mapper)
	if err != nil {
		return autoscale.Policy{}, err
	}
	served := servedKinds(missing)
	obs, err := r.observe(ctx, p, served)
	if err != nil {
		return autoscale.Policy{}, err
	}
	return policy(p, base, obs, r.brokerSafety(ctx, p, obs, served)), nil
}
