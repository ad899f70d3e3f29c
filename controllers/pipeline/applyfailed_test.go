package pipeline_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/controllers/internal/envtestutil"
	"github.com/strata-dev/strata/internal/desired"
)

// TestApplyFailedIsReported: when the API server refuses a child (here an admission policy
// denies KafkaTopics), the pipeline's condition says which and why, the other children (also
// those after it in the apply order) are still applied, and the pipeline recovers once the child
// is accepted.
func TestApplyFailedIsReported(t *testing.T) {
	o := envtestutil.StartOperator(t)
	ctx := context.Background()
	policy := &admissionv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "deny-topics"},
		Spec: admissionv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: ptr.To(admissionv1.Fail),
			MatchConstraints: &admissionv1.MatchResources{ResourceRules: []admissionv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionv1.RuleWithOperations{
					Operations: []admissionv1.OperationType{admissionv1.Create, admissionv1.Update},
					Rule: admissionv1.Rule{APIGroups: []string{"kafka.strimzi.io"}, APIVersions: []string{"*"},
						Resources: []string{"kafkatopics"}},
				},
			}}},
			Validations: []admissionv1.Validation{{Expression: "false", Message: "topics are frozen by policy"}},
		},
	}
	binding := &admissionv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "deny-topics"},
		Spec: admissionv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: "deny-topics",
			ValidationActions: []admissionv1.ValidationAction{admissionv1.Deny}},
	}
	if err := o.C.Create(ctx, policy); err != nil {
		t.Fatal(err)
	}
	if err := o.C.Create(ctx, binding); err != nil {
		t.Fatal(err)
	}
	ns, _ := o.CreateSamples(t)
	p := &v1alpha1.AnalyticsPipeline{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "sensors"}}
	envtestutil.WaitFor(t, o.C, p, func() error {
		if err := envtestutil.Condition(p.Status.Conditions, v1alpha1.ConditionKafkaReady, metav1.ConditionFalse, v1alpha1.ReasonApplyFailed); err != nil {
			return err
		}
		if msg := envtestutil.Meta(p, v1alpha1.ConditionKafkaReady).Message; !strings.Contains(msg, "KafkaTopic") || !strings.Contains(msg, "topics are frozen") {
			return fmt.Errorf("KafkaReady should name the refused object and the reason: %q", msg)
		}
		return nil
	})
	// The children after the topic in the apply order are applied all the same.
	for _, want := range []struct {
		gvk  schema.GroupVersionKind
		name string
	}{{desired.ElasticsearchGVK, desired.ElasticsearchName(p)}, {desired.SparkApplicationGVK, desired.SparkApplicationName(p)}} {
		if envtestutil.Child(t, o.C, want.gvk, ns, want.name) == nil {
			t.Errorf("%s %s was not applied: a refused KafkaTopic stopped the children after it", want.gvk.Kind, want.name)
		}
	}
	if envtestutil.Child(t, o.C, desired.KafkaTopicGVK, ns, desired.KafkaTopicName(p)) != nil {
		t.Fatal("the policy did not refuse the topic: the test proves nothing")
	}
	for _, c := range []string{v1alpha1.ConditionSparkReady, v1alpha1.ConditionElasticsearchReady} {
		if r := envtestutil.Meta(p, c); r == nil || r.Reason == v1alpha1.ReasonApplyFailed {
			t.Errorf("%s reports the topic's failure: %+v", c, r)
		}
	}

	if err := o.C.Delete(ctx, binding); err != nil {
		t.Fatal(err)
	}
	envtestutil.WaitFor(t, o.C, p, func() error {
		if c := envtestutil.Meta(p, v1alpha1.ConditionKafkaReady); c == nil || c.Reason == v1alpha1.ReasonApplyFailed {
			return fmt.Errorf("KafkaReady still reports the refused apply: %+v", c)
		}
		if p.Status.Plan == nil {
			return fmt.Errorf("no plan in status")
		}
		return nil
	})
}
