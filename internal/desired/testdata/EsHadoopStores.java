// Reads the stores Strata gives a job of the user's as elasticsearch-hadoop reads them, with the
// JDK alone (eskeystore_test.go runs it with `java EsHadoopStores.java`; elastic/elasticsearch-hadoop
// v9.3.2, mr/src/main/java/org/elasticsearch/hadoop/):
//
//   keystore <file> <setting>: security/KeystoreWrapper.java (PKCS12, the empty password,
//     a SecretKeyEntry whose key bytes are the setting's value); prints the value.
//   truststore <file> <password> <type>...: rest/commonshttp/SSLSocketFactory.java (loadKeyStore
//     with es.net.ssl.keystore.type, then TrustManagerFactory); prints each type and the subjects
//     the trust manager accepts as issuers.
import java.io.FileInputStream;
import java.io.InputStream;
import java.security.KeyStore;
import java.security.cert.X509Certificate;
import javax.net.ssl.TrustManager;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509TrustManager;

public class EsHadoopStores {
  public static void main(String[] args) throws Exception {
    if (args[0].equals("keystore")) {
      KeyStore ks = KeyStore.getInstance("PKCS12");
      char[] pass = "".toCharArray();
      try (InputStream in = new FileInputStream(args[1])) {
        ks.load(in, pass);
      }
      if (!ks.containsAlias(args[2])) {
        throw new IllegalStateException("no setting " + args[2]);
      }
      KeyStore.SecretKeyEntry e = (KeyStore.SecretKeyEntry) ks.getEntry(args[2], new KeyStore.PasswordProtection(pass));
      System.out.print(new String(e.getSecretKey().getEncoded()));
      return;
    }
    for (int i = 3; i < args.length; i++) {
      KeyStore ts = KeyStore.getInstance(args[i]);
      try (InputStream in = new FileInputStream(args[1])) {
        ts.load(in, args[2].toCharArray());
      }
      TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
      tmf.init(ts);
      StringBuilder line = new StringBuilder(args[i]);
      for (TrustManager tm : tmf.getTrustManagers()) {
        for (X509Certificate c : ((X509TrustManager) tm).getAcceptedIssuers()) {
          line.append(' ').append(c.getSubjectX500Principal().getName());
        }
      }
      System.out.println(line);
    }
  }
}
