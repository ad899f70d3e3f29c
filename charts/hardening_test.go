package charts_test

import (
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Issue 15, point 8: metrics scraped with verification, availability with several replicas,
// an optional NetworkPolicy.

func nested(t *testing.T, u *unstructured.Unstructured, path ...string) any {
	t.Helper()
	v, ok, err := unstructured.NestedFieldNoCopy(u.Object, path...)
	if !ok || err != nil {
		t.Fatalf("%s/%s has no %v (%v)", u.GetKind(), u.GetName(), path, err)
	}
	return v
}

func certOf(t *testing.T, secret *unstructured.Unstructured, key string) *x509.Certificate {
	t.Helper()
	b64, _, _ := unstructured.NestedString(secret.Object, "data", key)
	raw, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		t.Fatalf("%s: %v", key, err)
	}
	block, _ := pem.Decode(raw)
	if block == nil {
		t.Fatalf("%s is not PEM", key)
	}
	c, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatalf("%s: %v", key, err)
	}
	return c
}

// TestRenderMetricsTLS: without cert-manager the chart generates a CA and a serving certificate
// for the metrics Service's names; the manager serves it; the ServiceMonitor verifies it with
// that CA and the Service's name, honours the metrics' own labels, and never skips verification.
func TestRenderMetricsTLS(t *testing.T) {
	objs := render(t, release, namespace, "--set", "serviceMonitor.enabled=true")
	secret := find(objs, "Secret", "strata-metrics-tls")
	if secret == nil {
		t.Fatalf("no Secret strata-metrics-tls in %v", kinds(objs))
	}
	ca, cert := certOf(t, secret, "ca.crt"), certOf(t, secret, "tls.crt")
	roots := x509.NewCertPool()
	roots.AddCert(ca)
	server := fmt.Sprintf("strata-metrics.%s.svc", namespace)
	if _, err := cert.Verify(x509.VerifyOptions{Roots: roots, DNSName: server, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err != nil {
		t.Errorf("the serving certificate does not verify for %s with the CA: %v", server, err)
	}
	d := find(objs, "Deployment", fullname)
	checkArgs(t, d, []string{"--metrics-cert-dir=/etc/strata/metrics-tls"}, nil)
	mounts, _ := container(t, d)["volumeMounts"].([]any)
	if len(mounts) != 1 || mounts[0].(map[string]any)["mountPath"] != "/etc/strata/metrics-tls" {
		t.Errorf("volumeMounts %v, want the metrics certificate at /etc/strata/metrics-tls", mounts)
	}
	vols := nested(t, d, "spec", "template", "spec", "volumes").([]any)
	if name, _, _ := unstructured.NestedString(vols[0].(map[string]any), "secret", "secretName"); name != "strata-metrics-tls" {
		t.Errorf("volume %v, want the Secret strata-metrics-tls", vols)
	}
	sm := find(objs, "ServiceMonitor", fullname)
	ep := nested(t, sm, "spec", "endpoints").([]any)[0].(map[string]any)
	if ep["honorLabels"] != true {
		t.Errorf("ServiceMonitor endpoint honorLabels %v, want true (the metrics' namespace label names the pipeline's)", ep["honorLabels"])
	}
	tls := ep["tlsConfig"].(map[string]any)
	if _, skip := tls["insecureSkipVerify"]; skip || tls["serverName"] != server {
		t.Errorf("tlsConfig %v, want serverName %s and no insecureSkipVerify", tls, server)
	}
	if name, _, _ := unstructured.NestedString(tls, "ca", "secret", "name"); name != "strata-metrics-tls" {
		t.Errorf("tlsConfig.ca %v, want the Secret strata-metrics-tls", tls["ca"])
	}

	// With cert-manager: a self-signed Issuer, a CA Certificate, a CA Issuer and the serving
	// Certificate into the same Secret; with an issuerRef, only the serving Certificate.
	objs = render(t, release, namespace, "--set", "certManager.enabled=true", "--set", "serviceMonitor.enabled=true")
	if find(objs, "Secret", "strata-metrics-tls") != nil {
		t.Error("certManager.enabled still renders the generated Secret")
	}
	for _, want := range []string{"Issuer/strata-selfsigned", "Certificate/strata-metrics-ca", "Issuer/strata-metrics-ca", "Certificate/strata-metrics-tls"} {
		kind, name, _ := cutSlash(want)
		if find(objs, kind, name) == nil {
			t.Errorf("certManager.enabled: no %s in %v", want, kinds(objs))
		}
	}
	c := find(objs, "Certificate", "strata-metrics-tls")
	dns, _, _ := unstructured.NestedStringSlice(c.Object, "spec", "dnsNames")
	if !slices.Contains(dns, server) || nested(t, c, "spec", "secretName") != "strata-metrics-tls" {
		t.Errorf("Certificate dnsNames %v secretName %v, want %s and strata-metrics-tls", dns, nested(t, c, "spec", "secretName"), server)
	}
	objs = render(t, release, namespace, "--set", "certManager.enabled=true", "--set", "certManager.issuerRef.name=corp-ca", "--set", "certManager.issuerRef.kind=ClusterIssuer")
	if find(objs, "Issuer", "strata-selfsigned") != nil {
		t.Error("an issuerRef still renders the self-signed Issuer")
	}
	if ref, _, _ := unstructured.NestedStringMap(find(objs, "Certificate", "strata-metrics-tls").Object, "spec", "issuerRef"); ref["name"] != "corp-ca" || ref["kind"] != "ClusterIssuer" {
		t.Errorf("issuerRef %v, want corp-ca ClusterIssuer", ref)
	}
}

func cutSlash(s string) (string, string, bool) {
	for i := range s {
		if s[i] == '/' {
			return s[:i], s[i+1:], true
		}
	}
	return s, "", false
}

// TestRenderAvailability: one replica has no PodDisruptionBudget and no default anti-affinity;
// two get both (a budget selecting the manager's pods, and a preference for different nodes).
func TestRenderAvailability(t *testing.T) {
	objs := render(t, release, namespace)
	if find(objs, "PodDisruptionBudget", fullname) != nil {
		t.Error("a PodDisruptionBudget for one replica would block every drain")
	}
	if _, ok, _ := unstructured.NestedMap(find(objs, "Deployment", fullname).Object, "spec", "template", "spec", "affinity"); ok {
		t.Error("one replica: affinity set")
	}
	objs = render(t, release, namespace, "--set", "replicaCount=2")
	pdb := find(objs, "PodDisruptionBudget", fullname)
	if pdb == nil {
		t.Fatalf("replicaCount=2: no PodDisruptionBudget in %v", kinds(objs))
	}
	d := find(objs, "Deployment", fullname)
	podLabels := nested(t, d, "spec", "template", "metadata", "labels").(map[string]any)
	for k, v := range nested(t, pdb, "spec", "selector", "matchLabels").(map[string]any) {
		if podLabels[k] != v {
			t.Errorf("the budget selects %s=%v, which the pods lack", k, v)
		}
	}
	term := nested(t, d, "spec", "template", "spec", "affinity", "podAntiAffinity", "preferredDuringSchedulingIgnoredDuringExecution").([]any)[0].(map[string]any)
	if key, _, _ := unstructured.NestedString(term, "podAffinityTerm", "topologyKey"); key != "kubernetes.io/hostname" {
		t.Errorf("anti-affinity %v, want kubernetes.io/hostname", term)
	}
}

// TestRenderNetworkPolicy: ingress only to the metrics port from the selected namespaces;
// egress to the API server, Prometheus and DNS.
func TestRenderNetworkPolicy(t *testing.T) {
	if find(render(t, release, namespace), "NetworkPolicy", fullname) != nil {
		t.Error("a NetworkPolicy by default")
	}
	np := find(render(t, allOnRelease, allOnNamespace, "--values", allOnValues), "NetworkPolicy", allOnFullname)
	if np == nil {
		t.Fatal("networkPolicy.enabled: no NetworkPolicy")
	}
	ingress := nested(t, np, "spec", "ingress").([]any)
	if len(ingress) != 1 {
		t.Fatalf("ingress %v, want one rule (metrics)", ingress)
	}
	port, _, _ := unstructured.NestedFieldNoCopy(ingress[0].(map[string]any), "ports")
	if fmt.Sprint(port) != "[map[port:9443 protocol:TCP]]" {
		t.Errorf("ingress ports %v, want the metrics port 9443 only", port)
	}
	var ports []string
	for _, rule := range nested(t, np, "spec", "egress").([]any) {
		for _, p := range rule.(map[string]any)["ports"].([]any) {
			ports = append(ports, fmt.Sprint(p.(map[string]any)["port"]))
		}
	}
	if want := []string{"443", "6443", "9090", "53", "53"}; !slices.Equal(ports, want) {
		t.Errorf("egress ports %v, want %v", ports, want)
	}
}
