package desired

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestEsHadoopStoresReadByTheJDK reads both stores with the JDK as elasticsearch-hadoop does
// (testdata/EsHadoopStores.java): the keystore Strata writes, and the truststore the init
// container's script writes with keytool from a CA bundle of two certificates, as a PKCS12 and
// as a JKS store (es.net.ssl.keystore.type left at its default).
func TestEsHadoopStoresReadByTheJDK(t *testing.T) {
	java, errJava := exec.LookPath("java")
	_, errKeytool := exec.LookPath("keytool")
	sh, errSh := exec.LookPath("sh")
	if errJava != nil || errKeytool != nil || errSh != nil {
		t.Skip("needs java, keytool and sh")
	}
	if testing.Short() {
		t.Skip("starts six JVMs (about 10 s)")
	}
	dir := t.TempDir()
	checker, _ := filepath.Abs(filepath.Join("testdata", "EsHadoopStores.java"))
	run := func(name string, args ...string) string {
		t.Helper()
		cmd := exec.Command(name, args...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s %v: %v\n%s", name, args, err, out)
		}
		return string(out)
	}

	const password = "golden-password-of-the-test-0001"
	store, err := encodeEsHadoopKeystore(map[string]string{ESKeystorePasswordSetting: password})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ESKeystoreKey), store, 0o600); err != nil {
		t.Fatal(err)
	}
	if got := run(java, checker, "keystore", ESKeystoreKey, ESKeystorePasswordSetting); got != password {
		t.Errorf("the JDK reads %q from the keystore, want the password", got)
	}

	caFile := filepath.Join(dir, "ca.crt")
	bundle := append(selfSignedPEM(t, "elastic-ca-one"), selfSignedPEM(t, "elastic-ca-two")...)
	if err := os.WriteFile(caFile, bundle, 0o600); err != nil {
		t.Fatal(err)
	}
	truststore := filepath.Join(dir, "truststore.p12")
	script := strings.ReplaceAll(esTruststoreScript, ESTruststoreFile, truststore)
	script = strings.ReplaceAll(script, ElasticsearchCAMountPath+"/"+ElasticsearchCAKey, caFile)
	run(sh, "-c", script)
	run(sh, "-c", script) // a second run, as in a pod whose sandbox was recreated
	got := run(java, checker, "truststore", truststore, ESTruststorePassword, "PKCS12", "JKS")
	for _, want := range []string{"PKCS12", "JKS"} {
		line := want + " "
		for l := range strings.Lines(got) {
			if strings.HasPrefix(l, want+" ") {
				line = l
			}
		}
		if !strings.Contains(line, "CN=elastic-ca-one") || !strings.Contains(line, "CN=elastic-ca-two") {
			t.Errorf("%s truststore trusts %q, want both CAs", want, line)
		}
	}

	if err := os.WriteFile(caFile, []byte("no certificate\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(sh, "-c", script).CombinedOutput(); err == nil {
		t.Errorf("the script accepted a CA file without a certificate: %s", out)
	}
}

// selfSignedPEM is a throwaway self-signed CA certificate named cn, in PEM.
func selfSignedPEM(t *testing.T, cn string) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}
