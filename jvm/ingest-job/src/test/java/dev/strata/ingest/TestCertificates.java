package dev.strata.ingest;

import java.io.StringWriter;
import java.math.BigInteger;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.KeyStore;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.Date;
import java.util.List;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.ExtendedKeyUsage;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.asn1.x509.KeyPurposeId;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.openssl.jcajce.JcaPEMWriter;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

/**
 * Test only: a self-signed CA and an HTTP serving certificate it signs, laid out as ECK 3.5.0
 * publishes them. ECK's HTTP certificate (pkg/controller/elasticsearch/certificates/http and
 * pkg/controller/common/certificates in elastic/cloud-on-k8s) is issued by the cluster's own CA
 * for the names of the `<es>-es-http` Service (`<es>-es-http`, `<es>-es-http.<ns>`,
 * `<es>-es-http.<ns>.svc`, and the pods'), and the CA's certificate is the `ca.crt` key of the
 * Secret `<es>-es-http-certs-public`, which the operator mounts into the driver and executors and
 * names in spark.strata.elasticsearch.caPath.
 */
final class TestCertificates {
  private final KeyPair caKey;
  private final X509Certificate ca;

  TestCertificates(String name) throws Exception {
    caKey = keyPair();
    X500Name subject = new X500Name("CN=" + name);
    JcaX509v3CertificateBuilder b = new JcaX509v3CertificateBuilder(subject, BigInteger.ONE,
        Date.from(Instant.now().minus(Duration.ofHours(1))), Date.from(Instant.now().plus(Duration.ofDays(1))),
        subject, caKey.getPublic());
    b.addExtension(Extension.basicConstraints, true, new BasicConstraints(true));
    b.addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.keyCertSign | KeyUsage.cRLSign));
    ca = sign(b, caKey);
  }

  /** Writes the CA's certificate as PEM, as the Secret's ca.crt key is mounted. */
  Path writeCa(Path file) throws Exception {
    StringWriter s = new StringWriter();
    try (JcaPEMWriter w = new JcaPEMWriter(s)) {
      w.writeObject(ca);
    }
    Files.createDirectories(file.getParent());
    return Files.writeString(file, s.toString());
  }

  /** A server-side TLS context with a certificate this CA signed for dnsNames. */
  SSLContext serverContext(List<String> dnsNames) throws Exception {
    KeyPair key = keyPair();
    JcaX509v3CertificateBuilder b = new JcaX509v3CertificateBuilder(ca, BigInteger.valueOf(System.nanoTime()),
        Date.from(Instant.now().minus(Duration.ofHours(1))), Date.from(Instant.now().plus(Duration.ofDays(1))),
        new X500Name("CN=" + dnsNames.get(0)), key.getPublic());
    GeneralName[] names = dnsNames.stream().map(n -> new GeneralName(GeneralName.dNSName, n))
        .toArray(GeneralName[]::new);
    b.addExtension(Extension.subjectAlternativeName, false, new GeneralNames(names));
    b.addExtension(Extension.extendedKeyUsage, false, new ExtendedKeyUsage(KeyPurposeId.id_kp_serverAuth));
    X509Certificate cert = sign(b, caKey);
    KeyStore ks = KeyStore.getInstance("PKCS12");
    ks.load(null, null);
    char[] password = "test".toCharArray();
    ks.setKeyEntry("server", key.getPrivate(), password, new X509Certificate[] {cert, ca});
    KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
    kmf.init(ks, password);
    SSLContext ctx = SSLContext.getInstance("TLS");
    ctx.init(kmf.getKeyManagers(), null, null);
    return ctx;
  }

  private static KeyPair keyPair() throws Exception {
    KeyPairGenerator g = KeyPairGenerator.getInstance("EC");
    g.initialize(256);
    return g.generateKeyPair();
  }

  private static X509Certificate sign(JcaX509v3CertificateBuilder b, KeyPair issuer) throws Exception {
    return new JcaX509CertificateConverter().getCertificate(
        b.build(new JcaContentSignerBuilder("SHA256withECDSA").build(issuer.getPrivate())));
  }
}
