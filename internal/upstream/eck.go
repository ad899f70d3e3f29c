package upstream

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/strata-dev/strata/internal/testutil"
	"github.com/strata-dev/strata/internal/testutil/proc"
)

// ECKNamespace is the operator's namespace (the chart's elastic-system).
const ECKNamespace = "elastic-system"

// startECK runs ECK's operator over every namespace with its validating webhook, registered from
// ECK's own configuration (config/webhook/manifests.yaml at the pinned tag, beside the binary)
// with failure policy Fail. Certificates are the harness's (--manage-webhook-certs=false, as with
// cert-manager in a cluster).
func startECK(ctx context.Context, t testing.TB, dir, kubeconfig string, cfg *rest.Config, c client.Client) *proc.Process {
	t.Helper()
	bin := tool(t, "eck-operator")
	installCRDs(ctx, t, cfg, bin)
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ECKNamespace}}); client.IgnoreAlreadyExists(err) != nil {
		t.Fatal(err)
	}
	certs := certDir(dir, "eck")
	ca := servingCert(t, certs)
	port := testutil.FreePortNumber(t)
	b, err := os.ReadFile(filepath.Join(filepath.Dir(bin), "webhook.yaml"))
	if err != nil {
		t.Fatalf("ECK's webhook configuration: %v (hack/tools.sh path eck-operator writes it)", err)
	}
	var wh admissionv1.ValidatingWebhookConfiguration
	if err := yaml.Unmarshal(trimDocStart(b), &wh); err != nil {
		t.Fatalf("ECK's webhook configuration: %v", err)
	}
	wh.Name = "elastic-webhook.k8s.elastic.co"
	for i := range wh.Webhooks {
		atURL(&wh.Webhooks[i].ClientConfig, port, ca)
	}
	p := run(t, dir, "eck-operator", []string{"KUBECONFIG=" + kubeconfig}, bin, "manager",
		flag("operator-namespace", ECKNamespace),
		flag("enable-webhook", "true"),
		flag("manage-webhook-certs", "false"),
		flag("webhook-cert-dir", certs),
		flag("webhook-port", port),
		flag("metrics-port", "0"),
		flag("disable-telemetry", "true"),
		flag("enable-leader-election", "false"),
		flag("log-verbosity", "0"),
	)
	waitTLS(t, p, "localhost:"+port)
	createWebhooks(ctx, t, c, &wh)
	return p
}

// trimDocStart drops a leading YAML document marker.
func trimDocStart(b []byte) []byte {
	if len(b) >= 4 && string(b[:4]) == "---\n" {
		return b[4:]
	}
	return b
}
