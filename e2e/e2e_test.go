//go:build e2e

// Package e2e is Strata's end-to-end suite: on a kind cluster it installs Strimzi, the Kubeflow
// Spark operator and ECK the way their projects document, builds and loads the operator's image
// and the ingestion job's, installs the Helm chart, applies the samples and waits for the pipeline
// to be Ready, produces records and finds each indexed once, raises the workload and watches the
// brokers scale, deletes the pipeline and checks what goes and what
// stays, and uninstalls the chart. On failure it dumps logs, events and objects.
//
//	make e2e        # needs docker, kind and the internet; see README "End-to-end tests on kind"
//
// Environment: E2E_CLUSTER (kind cluster name, default strata-e2e; an existing one is reused),
// E2E_KEEP_CLUSTER=1 (do not delete it afterwards), E2E_KIND_NODE_IMAGE (kind's --image),
// E2E_IMAGE (operator image, default strata:e2e), E2E_JOB_IMAGE (the job's, default
// strata-spark:e2e), E2E_SKIP_BUILD=1 (the images are built already),
// E2E_ARTIFACTS (default e2e/artifacts), KIND, DOCKER, HELM (binaries).
package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/controllers/pipeline"
	"github.com/strata-dev/strata/internal/desired"
)

const (
	strataNamespace  = "strata-system"
	strimziNamespace = "strimzi"
	sparkNamespace   = "spark-operator"
	eckNamespace     = "elastic-system"
	// pipelineName is the sample pipeline's name (config/samples).
	pipelineName = "sensors"
	// maxMapCount is the vm.max_map_count ECK asks for Elasticsearch 8.16 and later.
	maxMapCount = 1048576
)

func TestEndToEnd(t *testing.T) {
	s := newSuite(t)
	s.step("create the kind cluster", s.createCluster)
	s.step("build the operator's image and load it into kind", s.loadImage)
	s.step("prepare the node: NVMe directories, the st1 StorageClass, namespaces", s.prepareNode)
	s.step("install Strimzi "+s.version("STRIMZI_VERSION"), s.installStrimzi)
	s.step("install the Spark operator "+s.version("SPARK_OPERATOR_VERSION"), s.installSparkOperator)
	s.step("install ECK "+s.version("ECK_VERSION"), s.installECK)
	s.step("helm install Strata", s.installStrata)
	s.step("apply the samples and wait for the pipeline to be Ready", s.applySamples)
	s.step("produce records and find each indexed once", s.moveRecords)
	s.step("raise the workload and watch the brokers scale", s.raiseWorkload)
	s.step("delete the pipeline: its children go, its data volumes stay", s.deletePipeline)
	s.step("delete the tiers: their unused volumes go", s.deleteTiers)
	s.step("helm uninstall Strata: the CRDs stay", s.uninstallStrata)
}

func (s *suite) step(name string, f func()) {
	s.t.Helper()
	start := time.Now()
	s.t.Logf("=== %s", name)
	f()
	s.t.Logf("=== %s: done in %s", name, time.Since(start).Round(time.Second))
}

// createCluster creates the kind cluster (or reuses one of that name) and arranges for the
// dump on failure and the deletion at the end.
func (s *suite) createCluster() {
	clusters := s.run(time.Minute, kindBin(), "get", "clusters")
	exists := false
	for _, c := range strings.Fields(clusters) {
		exists = exists || c == s.cluster
	}
	if exists {
		s.t.Logf("reusing the kind cluster %s", s.cluster)
	} else {
		args := []string{"create", "cluster", "--name", s.cluster,
			"--config", filepath.Join(s.root, "e2e", "testdata", "kind-config.yaml"), "--wait", "5m"}
		if img := os.Getenv("E2E_KIND_NODE_IMAGE"); img != "" {
			args = append(args, "--image", img)
		}
		s.run(15*time.Minute, kindBin(), args...)
	}
	if os.Getenv("E2E_KEEP_CLUSTER") == "" && !exists {
		s.t.Cleanup(func() {
			if _, err := s.tryRun(5*time.Minute, kindBin(), "delete", "cluster", "--name", s.cluster); err != nil {
				s.t.Logf("deleting the kind cluster: %v", err)
			}
		})
	}
	s.connect()
	s.t.Cleanup(func() {
		if s.t.Failed() {
			s.dump()
		}
	})
}

// loadImage builds the operator's image and Strata's job image (jvm/Dockerfile, FROM the pinned
// apache/spark image) and loads both into kind: the sample pipeline names no Spark image, so it
// runs Strata's ingestion job, whose image the chart's ingestJob.image names.
func (s *suite) loadImage() {
	if os.Getenv("E2E_SKIP_BUILD") == "" {
		s.run(30*time.Minute, dockerBin(), "build", "-t", s.image, s.root)
		s.run(30*time.Minute, "make", "-C", s.root, "job-image", "JOB_IMG="+s.jobImage)
	}
	for _, img := range []string{s.image, s.jobImage} {
		s.run(10*time.Minute, kindBin(), "load", "docker-image", img, "--name", s.cluster)
	}
}

// prepareNode gives the node the NVMe tier's directories (kind's node is a container: local
// volumes are directories in it) and the vm.max_map_count Elasticsearch needs, and creates a
// StorageClass "st1" for the HDD tier: a copy of kind's default class, whose local-path
// provisioner creates volumes on demand.
func (s *suite) prepareNode() {
	tiers, _, err := kindSamples()
	if err != nil {
		s.t.Fatal(err)
	}
	nodes := &corev1.NodeList{}
	if err := s.c.List(s.ctx, nodes); err != nil {
		s.t.Fatal(err)
	}
	for _, n := range nodes.Items {
		// kind names a node's container after the node.
		s.run(time.Minute, dockerBin(), append([]string{"exec", n.Name, "mkdir", "-p"}, nvmeTierPaths(tiers)...)...)
		// Elasticsearch's bootstrap check wants vm.max_map_count raised (ECK recommends 1048576
		// for Elasticsearch 8.16 and later); the setting is the host kernel's, which the
		// privileged node container may change.
		cur := strings.TrimSpace(s.run(time.Minute, dockerBin(), "exec", n.Name, "cat", "/proc/sys/vm/max_map_count"))
		if v, err := strconv.Atoi(cur); err != nil || v < maxMapCount {
			s.t.Logf("raising vm.max_map_count from %s to %d (a kernel-wide setting of the Docker host)", cur, maxMapCount)
			s.run(time.Minute, dockerBin(), "exec", n.Name, "sysctl", "-w", fmt.Sprintf("vm.max_map_count=%d", maxMapCount))
		}
	}
	standard := &storagev1.StorageClass{}
	if err := s.c.Get(s.ctx, client.ObjectKey{Name: "standard"}, standard); err != nil {
		s.t.Fatalf("kind's default StorageClass: %v", err)
	}
	st1 := &storagev1.StorageClass{
		ObjectMeta:           metav1.ObjectMeta{Name: "st1"},
		Provisioner:          standard.Provisioner,
		Parameters:           standard.Parameters,
		ReclaimPolicy:        standard.ReclaimPolicy,
		VolumeBindingMode:    standard.VolumeBindingMode,
		AllowVolumeExpansion: standard.AllowVolumeExpansion,
	}
	if err := s.c.Create(s.ctx, st1); err != nil && !apierrors.IsAlreadyExists(err) {
		s.t.Fatal(err)
	}
	// The operator's namespace enforces the "restricted" Pod Security Standard, as the chart
	// promises it can run there; the pipeline's namespace must exist before the Spark operator
	// is told to run jobs in it.
	for ns, labels := range map[string]map[string]string{
		strataNamespace:   {"pod-security.kubernetes.io/enforce": "restricted"},
		pipelineNamespace: nil,
	} {
		obj := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: labels}}
		if err := s.c.Create(s.ctx, obj); err != nil && !apierrors.IsAlreadyExists(err) {
			s.t.Fatal(err)
		}
	}
}

// installStrimzi installs the Cluster Operator from its release's single install file, set up
// as Strimzi's "Deploying the Cluster Operator to watch all namespaces" describes: the
// namespaces in the file's bindings replaced by the operator's own, STRIMZI_NAMESPACE="*", and
// ClusterRoleBindings for the namespaced, watched and entity-operator roles.
func (s *suite) installStrimzi() {
	v := s.version("STRIMZI_VERSION")
	objs := s.download(fmt.Sprintf("https://github.com/strimzi/strimzi-kafka-operator/releases/download/%s/strimzi-cluster-operator-%s.yaml", v, v))
	s.create([]*unstructured.Unstructured{namespace(strimziNamespace)})
	for _, o := range objs {
		if o.GetKind() != "CustomResourceDefinition" && o.GetNamespace() != "" {
			o.SetNamespace(strimziNamespace)
		}
		if subjects, ok, _ := unstructured.NestedSlice(o.Object, "subjects"); ok {
			for _, sub := range subjects {
				if m := sub.(map[string]any); m["namespace"] != nil {
					m["namespace"] = strimziNamespace
				}
			}
			_ = unstructured.SetNestedSlice(o.Object, subjects, "subjects")
		}
		if o.GetKind() == "Deployment" && o.GetName() == "strimzi-cluster-operator" {
			watchAllNamespaces(s, o)
		}
	}
	s.apply(objs, strimziNamespace)
	var bindings []*unstructured.Unstructured
	for name, role := range map[string]string{
		"strimzi-cluster-operator-namespaced":                 "strimzi-cluster-operator-namespaced",
		"strimzi-cluster-operator-watched":                    "strimzi-cluster-operator-watched",
		"strimzi-cluster-operator-entity-operator-delegation": "strimzi-entity-operator",
	} {
		bindings = append(bindings, &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "rbac.authorization.k8s.io/v1",
			"kind":       "ClusterRoleBinding",
			"metadata":   map[string]any{"name": name},
			"roleRef":    map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
			"subjects": []any{map[string]any{
				"kind": "ServiceAccount", "name": "strimzi-cluster-operator", "namespace": strimziNamespace,
			}},
		}})
	}
	s.apply(bindings, "")
	s.eventually("the Strimzi Cluster Operator", 10*time.Minute, s.rolledOut("Deployment", strimziNamespace, "strimzi-cluster-operator"))
}

// watchAllNamespaces sets STRIMZI_NAMESPACE to "*" in the Cluster Operator's container.
func watchAllNamespaces(s *suite, d *unstructured.Unstructured) {
	containers, _, _ := unstructured.NestedSlice(d.Object, "spec", "template", "spec", "containers")
	found := false
	for _, c := range containers {
		cm := c.(map[string]any)
		envs, _ := cm["env"].([]any)
		for i, e := range envs {
			if e.(map[string]any)["name"] == "STRIMZI_NAMESPACE" {
				envs[i] = map[string]any{"name": "STRIMZI_NAMESPACE", "value": "*"}
				found = true
			}
		}
	}
	if !found {
		s.t.Fatal("the Strimzi install file's Deployment has no STRIMZI_NAMESPACE variable to set")
	}
	_ = unstructured.SetNestedSlice(d.Object, containers, "spec", "template", "spec", "containers")
}

// installSparkOperator installs the Kubeflow Spark operator's Helm chart from its repository,
// running jobs in the pipeline's namespace with the ServiceAccount the pipeline names.
func (s *suite) installSparkOperator() {
	s.helm(15*time.Minute, "upgrade", "--install", "spark-operator", "spark-operator",
		"--repo", "https://kubeflow.github.io/spark-operator",
		"--version", s.version("SPARK_OPERATOR_VERSION"),
		"--namespace", sparkNamespace, "--create-namespace",
		"--set", "spark.jobNamespaces={"+pipelineNamespace+"}",
		"--set", "spark.serviceAccount.name="+sparkServiceAccount,
		"--wait", "--timeout", "10m")
}

// installECK creates ECK's CRDs (`kubectl create`, as Elastic documents: the Elasticsearch CRD
// is too large for a client-side apply) and applies its operator manifest.
func (s *suite) installECK() {
	v := s.version("ECK_VERSION")
	s.create(s.download(fmt.Sprintf("https://download.elastic.co/downloads/eck/%s/crds.yaml", v)))
	s.apply(s.download(fmt.Sprintf("https://download.elastic.co/downloads/eck/%s/operator.yaml", v)), eckNamespace)
	s.eventually("the ECK operator", 10*time.Minute, s.rolledOut("StatefulSet", eckNamespace, "elastic-operator"))
}

// installStrata installs the chart with the image built above, into a namespace that enforces
// the restricted Pod Security Standard.
func (s *suite) installStrata() {
	repo, tag, ok := strings.Cut(s.image, ":")
	if !ok {
		s.t.Fatalf("E2E_IMAGE %q has no tag", s.image)
	}
	s.helm(10*time.Minute, "upgrade", "--install", "strata", filepath.Join(s.root, "charts", "strata"),
		"--namespace", strataNamespace,
		"--set", "image.repository="+repo, "--set", "image.tag="+tag, "--set", "image.pullPolicy=IfNotPresent",
		"--set", "ingestJob.image="+s.jobImage,
		"--set", "logLevel=debug",
		"--wait", "--timeout", "5m")
	s.eventually("the operator", 5*time.Minute, s.rolledOut("Deployment", strataNamespace, "strata"))
}

// applySamples applies the tiers and the pipeline and waits for every condition to be True.
func (s *suite) applySamples() {
	tiers, pipeline, err := kindSamples()
	if err != nil {
		s.t.Fatal(err)
	}
	if pipeline.GetName() != pipelineName {
		s.t.Fatalf("the sample pipeline is %q, the suite expects %q", pipeline.GetName(), pipelineName)
	}
	s.apply(tiers, "")
	for _, tier := range tiers {
		s.eventually("StorageTier "+tier.GetName()+" Ready", 3*time.Minute, func() error {
			t := &v1alpha1.StorageTier{}
			if err := s.c.Get(s.ctx, client.ObjectKey{Name: tier.GetName()}, t); err != nil {
				return err
			}
			return conditionTrue(t.Status.Conditions, v1alpha1.ConditionReady)
		})
	}
	s.apply([]*unstructured.Unstructured{pipeline}, pipelineNamespace)
	// Strata's streaming job runs until stopped; the wait looks for a moment where every condition
	// is True at once.
	s.eventually("the pipeline to be Ready", 30*time.Minute, s.pipelineReady)
	// The driver runs as the pipeline's own ServiceAccount, bound to the chart's
	// strata-spark-driver ClusterRole: that it started executors at all shows the binding works.
	s.eventually("the driver to run as the pipeline's ServiceAccount", 5*time.Minute, func() error {
		pods := &corev1.PodList{}
		if err := s.c.List(s.ctx, pods, client.InNamespace(pipelineNamespace), client.MatchingLabels{"spark-role": "driver"}); err != nil {
			return err
		}
		if len(pods.Items) == 0 {
			return fmt.Errorf("no driver pod")
		}
		for _, pod := range pods.Items {
			if want := desired.SparkServiceAccountName(pipelineRef(pipeline)); pod.Spec.ServiceAccountName != want {
				return fmt.Errorf("driver pod %s runs as %q, want %q", pod.Name, pod.Spec.ServiceAccountName, want)
			}
		}
		return nil
	})
	// Driver and executors write their volumes (the checkpoint, spill, shuffle data) as the
	// image's user (uid 185): the pods carry the fsGroup the kubelet gives the volumes to.
	s.eventually("the Spark pods to carry fsGroup "+strconv.Itoa(desired.DefaultFSGroup), 5*time.Minute, func() error {
		pods := &corev1.PodList{}
		if err := s.c.List(s.ctx, pods, client.InNamespace(pipelineNamespace), client.HasLabels{"spark-role"}); err != nil {
			return err
		}
		roles := map[string]bool{}
		for _, pod := range pods.Items {
			sc := pod.Spec.SecurityContext
			if sc == nil || sc.FSGroup == nil || *sc.FSGroup != int64(desired.DefaultFSGroup) {
				return fmt.Errorf("pod %s has securityContext %+v, want fsGroup %d", pod.Name, sc, desired.DefaultFSGroup)
			}
			roles[pod.Labels["spark-role"]] = true
		}
		if !roles["driver"] || !roles["executor"] {
			return fmt.Errorf("Spark pods of roles %v, want a driver and an executor", roles)
		}
		return nil
	})
	s.checkJobCredentials(pipelineRef(pipeline))
}

// checkJobCredentials: the User Operator made the job's KafkaUser Secret, with the JAAS line the
// job reads, and the driver pod takes its credentials from Secrets by secretKeyRef (the pod
// template's env, which Spark keeps), none of them ECK's elastic user.
func (s *suite) checkJobCredentials(p *v1alpha1.AnalyticsPipeline) {
	s.eventually("the User Operator's Secret for the job's KafkaUser", 5*time.Minute, func() error {
		secret := &corev1.Secret{}
		if err := s.c.Get(s.ctx, client.ObjectKey{Namespace: p.Namespace, Name: desired.KafkaUserName(p)}, secret); err != nil {
			return err
		}
		if len(secret.Data[desired.KafkaUserJaasKey]) == 0 {
			return fmt.Errorf("Secret %s has no %s", secret.Name, desired.KafkaUserJaasKey)
		}
		return nil
	})
	s.eventually("the driver's credentials from the job's Secrets", 5*time.Minute, func() error {
		pods := &corev1.PodList{}
		if err := s.c.List(s.ctx, pods, client.InNamespace(p.Namespace), client.MatchingLabels{"spark-role": "driver"}); err != nil {
			return err
		}
		if len(pods.Items) == 0 {
			return fmt.Errorf("no driver pod")
		}
		refs := map[string]string{}
		for _, e := range pods.Items[0].Spec.Containers[0].Env {
			if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
				refs[e.Name] = e.ValueFrom.SecretKeyRef.Name
			}
		}
		if refs[desired.KafkaSaslJaasEnv] != desired.KafkaUserName(p) ||
			refs[desired.ESPasswordEnv] != desired.ElasticsearchUserSecretName(p) {
			return fmt.Errorf("driver env from Secrets %v", refs)
		}
		return nil
	})
}

// pipelineRef is the name and namespace of an applied pipeline as the builders name its children.
func pipelineRef(u *unstructured.Unstructured) *v1alpha1.AnalyticsPipeline {
	return &v1alpha1.AnalyticsPipeline{ObjectMeta: metav1.ObjectMeta{Name: u.GetName(), Namespace: pipelineNamespace}}
}

func (s *suite) pipeline() (*v1alpha1.AnalyticsPipeline, error) {
	p := &v1alpha1.AnalyticsPipeline{}
	err := s.c.Get(s.ctx, client.ObjectKey{Namespace: pipelineNamespace, Name: pipelineName}, p)
	return p, err
}

func (s *suite) pipelineReady() error {
	p, err := s.pipeline()
	if err != nil {
		return err
	}
	if p.Status.ObservedGeneration != p.Generation {
		return fmt.Errorf("generation %d not observed yet", p.Generation)
	}
	var waiting []string
	for _, c := range p.Status.Conditions {
		if c.Status != metav1.ConditionTrue && c.Type != v1alpha1.ConditionReady && c.Type != v1alpha1.ConditionAutoscaling {
			waiting = append(waiting, fmt.Sprintf("%s=%s (%s: %s)", c.Type, c.Status, c.Reason, c.Message))
		}
	}
	if err := conditionTrue(p.Status.Conditions, v1alpha1.ConditionReady); err != nil {
		return fmt.Errorf("%v; %s", err, strings.Join(waiting, "; "))
	}
	return nil
}

func conditionTrue(conds []metav1.Condition, typ string) error {
	c := meta.FindStatusCondition(conds, typ)
	if c == nil {
		return fmt.Errorf("no %s condition yet", typ)
	}
	if c.Status != metav1.ConditionTrue {
		return fmt.Errorf("%s=%s: %s: %s", typ, c.Status, c.Reason, c.Message)
	}
	return nil
}

// raiseWorkload raises spec.workload.messagesPerSecond to the smallest rate the planner says
// needs more brokers, and waits for the plan, Strimzi's node pool and the broker pods to follow.
func (s *suite) raiseWorkload() {
	tiers, pipeline, err := kindSamples()
	if err != nil {
		s.t.Fatal(err)
	}
	brokers, raisedBrokers, raised, err := raisedWorkload(tiers, pipeline)
	if err != nil {
		s.t.Fatal(err)
	}
	p, err := s.pipeline()
	if err != nil {
		s.t.Fatal(err)
	}
	if p.Status.Plan == nil || p.Status.Plan.Brokers != brokers {
		s.t.Fatalf("the operator planned %+v brokers, the planner says %d", p.Status.Plan, brokers)
	}
	s.t.Logf("raising the workload from %d to %d messages/s: %d brokers should become %d",
		p.Spec.Workload.MessagesPerSecond, raised, brokers, raisedBrokers)
	patch := fmt.Sprintf(`{"spec":{"workload":{"messagesPerSecond":%d}}}`, raised)
	if err := s.c.Patch(s.ctx, p, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
		s.t.Fatal(err)
	}
	s.eventually("the plan to have the new broker count", 2*time.Minute, func() error {
		p, err := s.pipeline()
		if err != nil {
			return err
		}
		if p.Status.ObservedGeneration != p.Generation || p.Status.Plan == nil || p.Status.Plan.Brokers != raisedBrokers {
			return fmt.Errorf("plan %+v for generation %d", p.Status.Plan, p.Status.ObservedGeneration)
		}
		return nil
	})
	pool := desired.BrokerPoolName(p)
	s.eventually("KafkaNodePool "+pool+" to have the new replicas", 2*time.Minute, func() error {
		np := &unstructured.Unstructured{}
		np.SetGroupVersionKind(schema.GroupVersionKind{Group: "kafka.strimzi.io", Version: "v1", Kind: "KafkaNodePool"})
		if err := s.c.Get(s.ctx, client.ObjectKey{Namespace: pipelineNamespace, Name: pool}, np); err != nil {
			return err
		}
		if r, _, _ := unstructured.NestedInt64(np.Object, "spec", "replicas"); r != int64(raisedBrokers) {
			return fmt.Errorf("replicas %d", r)
		}
		return nil
	})
	s.eventually(fmt.Sprintf("%d broker pods ready", raisedBrokers), 20*time.Minute, func() error {
		pods := &corev1.PodList{}
		if err := s.c.List(s.ctx, pods, client.InNamespace(pipelineNamespace), client.MatchingLabels{
			"strimzi.io/cluster": desired.KafkaName(p), "strimzi.io/pool-name": pool,
		}); err != nil {
			return err
		}
		ready := 0
		for _, pod := range pods.Items {
			for _, c := range pod.Status.Conditions {
				if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
					ready++
				}
			}
		}
		if ready != int(raisedBrokers) {
			return fmt.Errorf("%d of %d broker pods ready", ready, len(pods.Items))
		}
		return nil
	})
	s.eventually("Strimzi to report the scaled cluster Ready", 15*time.Minute, func() error {
		p, err := s.pipeline()
		if err != nil {
			return err
		}
		return conditionTrue(p.Status.Conditions, v1alpha1.ConditionKafkaReady)
	})
}

// deletePipeline deletes the pipeline: its children and their pods go (owner references); with
// the default volumeReclaimPolicy Retain the Kafka and Elasticsearch data volumes stay.
func (s *suite) deletePipeline() {
	p, err := s.pipeline()
	if err != nil {
		s.t.Fatal(err)
	}
	if err := s.c.Delete(s.ctx, p); err != nil {
		s.t.Fatal(err)
	}
	s.eventually("the pipeline to be gone", 5*time.Minute, func() error {
		if _, err := s.pipeline(); !apierrors.IsNotFound(err) {
			return fmt.Errorf("still there (%v)", err)
		}
		return nil
	})
	s.eventually("the pipeline's children and pods to be gone", 10*time.Minute, func() error {
		var left []string
		for _, k := range pipeline.ChildKinds {
			if k.CRD == "" {
				continue // built-in kinds (the metrics ConfigMap) share the namespace with others
			}
			gvk := k.GVK
			list := &unstructured.UnstructuredList{}
			list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
			if err := s.c.List(s.ctx, list, client.InNamespace(pipelineNamespace)); err != nil {
				return err
			}
			for _, item := range list.Items {
				left = append(left, gvk.Kind+"/"+item.GetName())
			}
		}
		pods := &corev1.PodList{}
		if err := s.c.List(s.ctx, pods, client.InNamespace(pipelineNamespace)); err != nil {
			return err
		}
		for _, pod := range pods.Items {
			left = append(left, "Pod/"+pod.Name)
		}
		if len(left) > 0 {
			return fmt.Errorf("left: %s", strings.Join(left, ", "))
		}
		return nil
	})
	for label, what := range map[string]string{
		"strimzi.io/cluster":                        "Kafka",
		"elasticsearch.k8s.elastic.co/cluster-name": "Elasticsearch",
	} {
		pvcs := &corev1.PersistentVolumeClaimList{}
		if err := s.c.List(s.ctx, pvcs, client.InNamespace(pipelineNamespace), client.MatchingLabels{label: pipelineName}); err != nil {
			s.t.Fatal(err)
		}
		if len(pvcs.Items) == 0 {
			s.t.Errorf("no %s data volume left: volumeReclaimPolicy Retain (the default) should keep them", what)
		}
		for _, pvc := range pvcs.Items {
			s.t.Logf("kept %s volume claim %s (%s)", what, pvc.Name, pvc.Spec.VolumeName)
		}
	}
}

// deleteTiers deletes the sample tiers. The NVMe tier's finalizer removes its local volumes that
// no claim holds and keeps the others; the retained Kafka claims still hold some.
func (s *suite) deleteTiers() {
	tiers, _, err := kindSamples()
	if err != nil {
		s.t.Fatal(err)
	}
	for _, tier := range tiers {
		t := &v1alpha1.StorageTier{ObjectMeta: metav1.ObjectMeta{Name: tier.GetName()}}
		if err := s.c.Delete(s.ctx, t); err != nil && !apierrors.IsNotFound(err) {
			s.t.Fatal(err)
		}
		s.eventually("StorageTier "+t.Name+" to be gone", 5*time.Minute, func() error {
			if err := s.c.Get(s.ctx, client.ObjectKeyFromObject(t), t); !apierrors.IsNotFound(err) {
				return fmt.Errorf("still there (%v, finalizers %v)", err, t.Finalizers)
			}
			return nil
		})
		s.eventually("tier "+t.Name+"'s unclaimed volumes to be gone", 5*time.Minute, func() error {
			pvs := &corev1.PersistentVolumeList{}
			if err := s.c.List(s.ctx, pvs, client.MatchingLabels(desired.TierSelectorLabels(t))); err != nil {
				return err
			}
			var unclaimed []string
			for _, pv := range pvs.Items {
				if pv.Spec.ClaimRef == nil {
					unclaimed = append(unclaimed, pv.Name)
				}
			}
			if len(unclaimed) > 0 {
				return fmt.Errorf("unclaimed volumes left: %v", unclaimed)
			}
			return nil
		})
	}
}

// uninstallStrata uninstalls the chart: the operator goes, the CRDs (crds/ of the chart) stay.
func (s *suite) uninstallStrata() {
	s.helm(5*time.Minute, "uninstall", "strata", "--namespace", strataNamespace, "--wait", "--timeout", "3m")
	s.eventually("the operator's Deployment to be gone", 3*time.Minute, func() error {
		err := s.rolledOut("Deployment", strataNamespace, "strata")()
		if !apierrors.IsNotFound(err) {
			return fmt.Errorf("still there (%v)", err)
		}
		return nil
	})
	for _, name := range []string{"analyticspipelines.strata.dev", "storagetiers.strata.dev"} {
		crd := &unstructured.Unstructured{}
		crd.SetGroupVersionKind(schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"})
		if err := s.c.Get(s.ctx, client.ObjectKey{Name: name}, crd); err != nil {
			s.t.Errorf("CRD %s after helm uninstall: %v (Helm keeps what crds/ installed)", name, err)
		}
	}
}

func namespace(name string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": name},
	}}
}
