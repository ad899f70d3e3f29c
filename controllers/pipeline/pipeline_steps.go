package pipeline

import (
	"context"
	"fmt"
	"math"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/controllers/internal/setup"
	"github.com/strata-dev/strata/internal/desired"
	"github.com/strata-dev/strata/internal/plan"
	"github.com/strata-dev/strata/internal/ssa"
)

// The steps of Reconcile, in its order. Each reads and fills in the scope; an error ends the
// reconcile (the status built so far is still written) and brings a retry with backoff.

// discoverKinds finds the child kinds the API server serves and watches those not watched yet.
func (r *Reconciler) discoverKinds(_ context.Context, s *scope) error {
	missing, err := missingKinds(r.Mapper)
	if err != nil {
		return err
	}
	s.missing, s.served = missing, servedKinds(missing)
	return r.watches.ensure(s.served)
}

// readTiers reads the StorageTiers the pipeline names and sets StorageReady.
func (r *Reconciler) readTiers(ctx context.Context, s *scope) (err error) {
	if s.tiers, s.absentTiers, err = r.tiers(ctx, s.pipeline); err != nil {
		return err
	}
	setStorageCondition(s.conds, s.pipeline.Namespace, s.tiers, s.absentTiers)
	return nil
}

// observeChildren reads the pipeline's children of every served kind from the cache.
func (r *Reconciler) observeChildren(ctx context.Context, s *scope) (err error) {
	s.observed, err = r.observe(ctx, s.pipeline, s.served)
	return err
}

// tiers returns the StorageTiers p names, by name, and the names that do not exist.
func (r *Reconciler) tiers(ctx context.Context, p *v1alpha1.AnalyticsPipeline) (map[string]*v1alpha1.StorageTier, []string, error) {
	found := map[string]*v1alpha1.StorageTier{}
	var absent []string
	for _, name := range tierNames(p) {
		t := &v1alpha1.StorageTier{}
		err := r.Client.Get(ctx, client.ObjectKey{Name: name}, t)
		switch {
		case apierrors.IsNotFound(err):
			absent = append(absent, name)
		case err != nil:
			return nil, nil, err
		default:
			found[name] = t
		}
	}
	return found, absent, nil
}

// observe reads p's children of the served kinds from the cache, by identity.
func (r *Reconciler) observe(ctx context.Context, p *v1alpha1.AnalyticsPipeline, served []schema.GroupVersionKind) (observed, error) {
	obs := observed{}
	for _, gvk := range served {
		objs, err := children(ctx, r.Client, gvk, p, r.watches)
		if err != nil {
			return nil, err
		}
		for _, o := range objs {
			obs[ssa.KeyOf(o)] = o
		}
	}
	return obs, nil
}

// autoscaleStep: the autoscaler's targets, which the plan applied is computed with.
func (r *Reconciler) autoscaleStep(ctx context.Context, s *scope) error {
	s.targets = r.autoscale(s.pipeline, s.conds)
	return nil
}

// planStep computes the plan to apply and sets PlanValid. An invalid spec is not retried: the
// next change to the pipeline or its tiers triggers the next attempt. What already runs bounds
// the plan (plan.Compute, from what kafka_scaling.go observes): the KRaft quorum stays the one
// the cluster was created with, brokers leave one at a time through the autoscaler's safety
// gate, and partitions never shrink: Kafka cannot remove them (nor those of a retained topic the
// pipeline was created again for: retained_claims.go).
func (r *Reconciler) planStep(ctx context.Context, s *scope) error {
	obs := r.observedCluster(ctx, s)
	kept, err := r.retainedPartitions(ctx, s)
	if err != nil {
		return err
	}
	obs.Partitions = max(obs.Partitions, kept)
	res, err := plan.Compute(s.pipeline, namedTiers(s), obs)
	s.plan = res.Plan
	switch {
	case plan.IsMissingTier(err):
		s.conds.Set(v1alpha1.ConditionPlanValid, metav1.ConditionFalse, v1alpha1.ReasonTierNotFound,
			err.Error()+": the pipeline is planned when the tier exists")
		return nil
	case err != nil:
		s.conds.Set(v1alpha1.ConditionPlanValid, metav1.ConditionFalse, v1alpha1.ReasonInvalidSpec, err.Error())
		return nil
	case s.pipeline.Spec.Spark.ServiceAccountName != "" && !r.AllowUserServiceAccounts:
		// Running a driver as any ServiceAccount of the namespace would give whoever may create
		// a pipeline that account's rights: only the operator's installer can allow it.
		s.conds.Set(v1alpha1.ConditionPlanValid, metav1.ConditionFalse, v1alpha1.ReasonInvalidSpec,
			fmt.Sprintf("spec.spark.serviceAccountName (%q) is not allowed by this installation of the operator: "+
				"leave it empty (the driver gets a ServiceAccount of the pipeline's own), or install the operator "+
				"with the Helm value spark.allowUserServiceAccounts=true (--allow-user-service-accounts)",
				s.pipeline.Spec.Spark.ServiceAccountName))
		return nil
	}
	s.planned = true
	s.emptyBrokers = res.EmptyBrokers
	planned := res.Plan
	setDurabilityCondition(s.conds, s.pipeline.Spec.Kafka, planned)
	r.announceQuorum(s, res.Notes.Quorum)
	msg := fmt.Sprintf("%d brokers, %d executors, %d data nodes; bottleneck %s", planned.Brokers,
		planned.Executors, planned.ElasticsearchDataNodes, planned.Bottleneck)
	notes := res.Notes.String()
	if notes != "" {
		msg += "; " + notes
	}
	if why := unsatisfied(planned); why != "" {
		why += " (applied at the spec's bounds)"
		if notes != "" {
			why += "; " + notes
		}
		s.conds.Set(v1alpha1.ConditionPlanValid, metav1.ConditionFalse, v1alpha1.ReasonCapacityExceeded, why)
		return nil
	}
	s.conds.Set(v1alpha1.ConditionPlanValid, metav1.ConditionTrue, v1alpha1.ReasonPlanned, msg)
	return nil
}

// buildDesired builds the children the plan wants, of the kinds the API server serves.
func (r *Reconciler) buildDesired(_ context.Context, s *scope) error {
	if !s.planned {
		return nil
	}
	served := map[string]bool{}
	for _, gvk := range s.served {
		served[gvk.String()] = true
	}
	// A remove-brokers rebalance Strimzi ended without moving the replicas is asked again a
	// minute later; the reconcile looks again then.
	refresh, after := removalRefresh(s.observed, s.pipeline, time.Now())
	s.recheck = sooner(s.recheck, after)
	// The tiers the plan was computed on: pods on a local tier get node affinity to its nodes.
	in := desired.Inputs{Pipeline: s.pipeline, Plan: s.plan, IngestImage: r.IngestImage, ElasticsearchPassword: s.esPassword,
		EmptyBrokers: s.emptyBrokers, RefreshRemoval: refresh, Tiers: namedTiers(s)}
	in.SubmittedExecutors = keptExecutors(s.observed, in)
	for _, obj := range desired.All(in) {
		if served[obj.GroupVersionKind().String()] {
			s.desired = append(s.desired, obj)
		}
	}
	return nil
}

// applyChildren applies every desired child and deletes the children the plan no longer
// wants. A refused child does not stop the others: its failure is recorded for its condition
// and the reconcile is retried. The plan goes to status once every child is applied.
func (r *Reconciler) applyChildren(ctx context.Context, s *scope) error {
	if !s.planned {
		return nil
	}
	sc := pipelineScope(client.ObjectKeyFromObject(s.pipeline))
	wanted := map[ssa.Key]bool{}
	// The applies of a wave go at once (apply_waves.go); the results are taken in s.desired's
	// order, so that failures are recorded as a reconcile one after another recorded them.
	results := applyAll(ctx, r.Applier, sc, s.desired, func(k ssa.Key) *unstructured.Unstructured { return s.observed[k] })
	for i, obj := range s.desired {
		key := ssa.KeyOf(obj)
		wanted[key] = true
		if err := results[i].err; err != nil {
			s.failures = append(s.failures, &childError{gvk: obj.GroupVersionKind(), err: err})
			continue
		}
		// The status is computed from the children as the server now has them: the cache may
		// not have seen this apply yet, and a status from it would be rewritten a moment later.
		s.observed[key] = results[i].live
	}
	for _, key := range sortedKeys(s.observed) {
		if wanted[key] {
			continue
		}
		if err := prune(ctx, r.Client, r.Applier, s.observed[key]); err != nil {
			s.failures = append(s.failures, &childError{gvk: key.GVK, err: err})
			continue
		}
		delete(s.observed, key)
	}
	if len(s.failures) == 0 {
		s.pipeline.Status.Plan = &s.plan
	}
	return nil
}

// reportPods sets PodsScheduled from the pipeline's pods as the cache has them (only pods with
// its label are cached: pipeline_scheduling.go): before Ready, which it is part of.
func (r *Reconciler) reportPods(ctx context.Context, s *scope) error {
	pods := &corev1.PodList{}
	opts := []client.ListOption{client.InNamespace(s.pipeline.Namespace), client.MatchingLabels{desired.LabelPipeline: s.pipeline.Name}}
	if r.podsIndexed {
		// From the index: this pipeline's pods, not every pipeline pod of the namespace.
		opts = append(opts, client.MatchingFields{podPipelineIndex: s.pipeline.Name})
	}
	if err := r.Client.List(ctx, pods, opts...); err != nil {
		return err
	}
	st := podsScheduled(s.pipeline, pods.Items)
	s.conds.Set(v1alpha1.ConditionPodsScheduled, st.status, st.reason, st.message)
	return nil
}

// reportChildren sets KafkaReady, SparkReady and ElasticsearchReady from the children's own
// status (or the missing CRDs, or the refused applies), then Ready; the status now describes
// this generation.
func (r *Reconciler) reportChildren(_ context.Context, s *scope) error {
	s.recheck = sooner(s.recheck, setChildConditions(s.conds, s.pipeline, s.missing, s.observed, time.Now(), r.UpstreamStatusTimeout))
	for cond, msg := range s.failuresByCondition() {
		// Say what failed where users look; the reconcile is retried with backoff.
		s.conds.Set(cond, metav1.ConditionFalse, v1alpha1.ReasonApplyFailed, msg)
	}
	setReadyCondition(s.conds)
	s.pipeline.Status.ObservedGeneration = s.pipeline.Generation
	return nil
}

// namedTiers are the existing tiers the pipeline names, in name order (the autoscaler's targets
// change no tier).
func namedTiers(s *scope) []v1alpha1.StorageTier {
	list := make([]v1alpha1.StorageTier, 0, len(s.tiers))
	for _, name := range tierNames(s.pipeline) {
		if t, ok := s.tiers[name]; ok {
			list = append(list, *t)
		}
	}
	return list
}

// tierNames lists the distinct tiers a pipeline names, sorted.
func tierNames(p *v1alpha1.AnalyticsPipeline) []string {
	set := map[string]bool{}
	for _, n := range []string{p.Spec.Kafka.Storage.Tier, p.Spec.Spark.Shuffle.SpillTier,
		p.Spec.Spark.Shuffle.DataTier, p.Spec.Elasticsearch.Storage.Tier} {
		if n != "" {
			set[n] = true
		}
	}
	for _, n := range metadataTiers(p.Spec) {
		if n != "" {
			set[n] = true
		}
	}
	names := make([]string, 0, len(set))
	for n := range set {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func sortedKeys(o observed) []ssa.Key {
	keys := make([]ssa.Key, 0, len(o))
	for k := range o {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if a.GVK != b.GVK {
			return a.GVK.String() < b.GVK.String()
		}
		if a.Namespace != b.Namespace {
			return a.Namespace < b.Namespace
		}
		return a.Name < b.Name
	})
	return keys
}

// keptExecutors is the executor count p's SparkApplication keeps (desired.Inputs
// SubmittedExecutors) for a job that changes its executors in place: the count it was submitted
// with, so that the Spark operator has nothing to submit again for what the driver does itself
// (desired.ExecutorTarget). 0, the plan's count, when there is no SparkApplication yet, or when
// it changes anyway (a new memory split or micro-batch size, a field someone else changed): the
// Spark operator then submits the job again, and its new driver had better start with the count
// it is to run than start the old one's pods and remove them seconds later.
func keptExecutors(obs observed, in desired.Inputs) int32 {
	p := in.Pipeline
	app := obs.get(desired.SparkApplicationGVK, p.Namespace, desired.SparkApplicationName(p))
	if app == nil || !desired.ScalesExecutorsInPlace(p) {
		return 0
	}
	n, _, _ := unstructured.NestedInt64(app.Object, "spec", "executor", "instances")
	in.SubmittedExecutors = int32(min(max(n, 0), math.MaxInt32))
	if in.SubmittedExecutors == 0 || !ssa.UpToDate(app, desired.SparkApplication(in), setup.FieldOwner) {
		return 0
	}
	return in.SubmittedExecutors
}
