package pipeline_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/controllers/internal/envtestutil"
	"github.com/strata-dev/strata/internal/controlplane"
)

// TestUpstreamCRDsMissing: on a cluster without Strimzi, the Spark operator and ECK the operator
// keeps running, says what to install in conditions, and carries on when the CRDs appear.
func TestUpstreamCRDsMissing(t *testing.T) {
	o := envtestutil.StartOperator(t, controlplane.WithoutUpstreamCRDs())
	ns, _ := o.CreateSamples(t)
	p := &v1alpha1.AnalyticsPipeline{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "sensors"}}
	envtestutil.WaitFor(t, o.C, p, func() error {
		for _, c := range []string{v1alpha1.ConditionKafkaReady, v1alpha1.ConditionSparkReady, v1alpha1.ConditionElasticsearchReady} {
			if err := envtestutil.Condition(p.Status.Conditions, c, metav1.ConditionFalse, v1alpha1.ReasonUpstreamCRDMissing); err != nil {
				return err
			}
		}
		return envtestutil.Condition(p.Status.Conditions, v1alpha1.ConditionReady, metav1.ConditionFalse, "")
	})
	kafka := envtestutil.Meta(p, v1alpha1.ConditionKafkaReady)
	if !strings.Contains(kafka.Message, "Strimzi") || !strings.Contains(kafka.Message, "kafka.strimzi.io/v1 Kafka") {
		t.Errorf("KafkaReady message should name the missing kind and Strimzi: %q", kafka.Message)
	}

	dirs, err := controlplane.UpstreamCRDDirs()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := envtest.InstallCRDs(o.Env.Config, envtest.CRDInstallOptions{Paths: dirs, ErrorIfPathMissing: true, MaxTime: controlplane.CRDWait}); err != nil {
		t.Fatal(err)
	}
	envtestutil.WaitFor(t, o.C, p, func() error {
		for _, c := range []string{v1alpha1.ConditionKafkaReady, v1alpha1.ConditionSparkReady, v1alpha1.ConditionElasticsearchReady} {
			if cond := envtestutil.Meta(p, c); cond == nil || cond.Reason == v1alpha1.ReasonUpstreamCRDMissing {
				return fmt.Errorf("%s still reports the CRDs missing", c)
			}
		}
		return nil
	})
}

// TestTierRecovers: a dynamic tier whose StorageClass is missing is not Ready, and a pipeline
// naming a tier that does not exist says so; both recover when the missing object appears.
func TestTierRecovers(t *testing.T) {
	o := envtestutil.StartOperator(t)
	ns, tiers := o.CreateSamples(t)
	ctx := context.Background()

	tier := &v1alpha1.StorageTier{ObjectMeta: metav1.ObjectMeta{Name: tiers["hdd-st1"]}}
	envtestutil.WaitFor(t, o.C, tier, func() error {
		return envtestutil.Condition(tier.Status.Conditions, v1alpha1.ConditionReady, metav1.ConditionFalse, v1alpha1.ReasonStorageClassNotFound)
	})
	sc := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: tier.Spec.StorageClassName}, Provisioner: "ebs.csi.aws.com"}
	if err := o.C.Create(ctx, sc); err != nil {
		t.Fatal(err)
	}
	envtestutil.WaitFor(t, o.C, tier, func() error {
		return envtestutil.Condition(tier.Status.Conditions, v1alpha1.ConditionReady, metav1.ConditionTrue, v1alpha1.ReasonAvailable)
	})

	// A pipeline naming a tier that does not exist yet.
	p := &v1alpha1.AnalyticsPipeline{}
	if err := o.C.Get(ctx, client.ObjectKey{Namespace: ns, Name: "sensors"}, p); err != nil {
		t.Fatal(err)
	}
	missing := "archive-" + ns
	p.Spec.Spark.Shuffle.DataTier = missing
	if err := o.C.Update(ctx, p); err != nil {
		t.Fatal(err)
	}
	envtestutil.WaitFor(t, o.C, p, func() error {
		if err := envtestutil.Condition(p.Status.Conditions, v1alpha1.ConditionStorageReady, metav1.ConditionFalse, v1alpha1.ReasonTierNotFound); err != nil {
			return err
		}
		if !strings.Contains(envtestutil.Meta(p, v1alpha1.ConditionStorageReady).Message, missing) {
			return fmt.Errorf("StorageReady does not name the missing tier")
		}
		return nil
	})
	archive := tier.DeepCopy()
	archive.ObjectMeta = metav1.ObjectMeta{Name: missing}
	archive.Status = v1alpha1.StorageTierStatus{}
	archive.Spec.MonthlyPricePerGiB = "0.018"
	archive.Spec.ReadBytesPerSecond = resource.MustParse("250M")
	if err := o.C.Create(ctx, archive); err != nil {
		t.Fatal(err)
	}
	envtestutil.WaitFor(t, o.C, p, func() error {
		if c := envtestutil.Meta(p, v1alpha1.ConditionStorageReady); c == nil || c.Reason == v1alpha1.ReasonTierNotFound {
			return fmt.Errorf("StorageReady still says a tier is missing: %+v", c)
		}
		return nil
	})
}
