package lab

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/strata-dev/strata/internal/desired"
	"github.com/strata-dev/strata/internal/testutil"
)

// driverKubeconfig writes the kubeconfig the lab's job reaches the control plane with: a token of
// the ServiceAccount the operator made for the pipeline's driver, whose rights are the ones the
// operator's RoleBinding gives it (the chart's strata-spark-driver ClusterRole), as the driver pod
// mounts that account's token in a cluster. It waits until the operator has applied both.
func (l *Lab) driverKubeconfig(t testing.TB) string {
	t.Helper()
	ctx := context.Background()
	p := l.Pipeline
	cs := l.Operator.clientset
	name := desired.SparkServiceAccountName(p)
	testutil.Eventually(t, 2*time.Minute, "the operator to make the driver's ServiceAccount, RoleBinding and executor target", func() error {
		if _, err := cs.CoreV1().ServiceAccounts(p.Namespace).Get(ctx, name, metav1.GetOptions{}); err != nil {
			return err
		}
		if _, err := cs.CoreV1().ConfigMaps(p.Namespace).Get(ctx, desired.ExecutorsConfigMapName(p), metav1.GetOptions{}); err != nil {
			return err
		}
		_, err := cs.RbacV1().RoleBindings(p.Namespace).Get(ctx, name, metav1.GetOptions{})
		return err
	})
	path := filepath.Join(l.dir, "driver.kubeconfig")
	if err := WriteKubeconfig(ctx, cs, l.Operator.Config, p.Namespace, name, path); err != nil {
		t.Fatal(err)
	}
	return path
}
