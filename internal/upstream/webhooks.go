package upstream

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/strata-dev/strata/internal/lab"
)

// servingCert writes a CA and a serving certificate for localhost into dir (tls.crt, tls.key,
// ca.crt: what controller-runtime's webhook server reads) and returns the CA's PEM, for the
// webhook configurations' caBundle. The API server calls the webhooks at https://localhost:<port>:
// there is no Service DNS here.
func servingCert(t testing.TB, dir string) []byte {
	t.Helper()
	ca, err := lab.WriteServingCert(dir, "localhost")
	if err != nil {
		t.Fatal(err)
	}
	pem, err := os.ReadFile(ca)
	if err != nil {
		t.Fatal(err)
	}
	return pem
}

// atURL points a webhook at https://localhost:port with the path its Service reference names,
// trusting ca, and makes it fail closed: what the API server cannot validate, it refuses.
func atURL(w *admissionv1.WebhookClientConfig, port string, ca []byte) {
	path := ""
	if w.Service != nil && w.Service.Path != nil {
		path = *w.Service.Path
	}
	w.Service = nil
	w.URL = ptr.To("https://localhost:" + port + path)
	w.CABundle = ca
}

// createWebhooks creates the configurations, every webhook failing closed.
func createWebhooks(ctx context.Context, t testing.TB, c client.Client, objs ...client.Object) {
	t.Helper()
	for _, o := range objs {
		switch w := o.(type) {
		case *admissionv1.ValidatingWebhookConfiguration:
			for i := range w.Webhooks {
				w.Webhooks[i].FailurePolicy = ptr.To(admissionv1.Fail)
			}
		case *admissionv1.MutatingWebhookConfiguration:
			for i := range w.Webhooks {
				w.Webhooks[i].FailurePolicy = ptr.To(admissionv1.Fail)
			}
		}
		if err := c.Create(ctx, o); err != nil {
			t.Fatalf("creating %s: %v", o.GetName(), err)
		}
	}
}

func certDir(dir, name string) string { return filepath.Join(dir, name+"-certs") }
