package dev.strata.ingest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Timestamp;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The job's TLS path to the search server, as a cluster runs it: the node serves HTTPS with a
 * certificate for the Service's names signed by a CA shaped like ECK's (TestCertificates), and
 * the job trusts exactly the CA file the operator mounts (spark.strata.elasticsearch.caPath, the
 * Secret `<es>-es-http-certs-public`'s ca.crt), with its user and password from the environment.
 * The job's own code runs: IngestJob.setUpIndex (its first request at start) and PartitionWriter
 * (the bulk ingester each Spark task runs). IngestJobTest runs the stream end to end over HTTP.
 */
class IngestTlsTest {
  static final String ES = "sensors";
  static final String NS = "analytics";
  static final String USER = "sensors-ingest";
  static final String PASSWORD = "es-password-of-the-tls-test";

  @TempDir static Path dir;
  static TestCertificates eck;
  static EmbeddedSearch search;
  static Path caFile;

  @BeforeAll
  static void start() throws Exception {
    eck = new TestCertificates(ES + "-http");
    caFile = eck.writeCa(dir.resolve("es-http-certs-public").resolve("ca.crt"));
    // ECK's names for the HTTP Service, and localhost, the name the test reaches the node by
    // (the cluster's job reaches it by <es>-es-http.<ns>.svc). No IP address.
    search = new EmbeddedSearch(dir, "search-tls", eck.serverContext(List.of("localhost",
        ES + "-es-http", ES + "-es-http." + NS, ES + "-es-http." + NS + ".svc")));
    Env.lookup = Map.of("ES_USER", USER, "ES_PASSWORD", PASSWORD)::get;
    ElasticsearchCompat.requireBasicAuth(USER, PASSWORD);
  }

  @AfterAll
  static void stop() throws Exception {
    Env.lookup = System::getenv;
    ElasticsearchCompat.requiredAuthorization = null;
    if (search != null) {
      search.close();
    }
  }

  static IngestConf conf(String index, String url, Path ca) {
    Map<String, String> m = new HashMap<>();
    m.put("spark.strata.pipeline", "sensors");
    m.put("spark.strata.checkpointDir", dir.resolve("checkpoint").toString());
    m.put("spark.strata.kafka.bootstrapServers", "sensors-kafka-bootstrap.analytics.svc:9092");
    m.put("spark.strata.kafka.topic", "sensor-readings");
    m.put("spark.strata.kafka.maxOffsetsPerTrigger", "1000");
    m.put("spark.strata.elasticsearch.url", url);
    if (ca != null) {
      m.put("spark.strata.elasticsearch.caPath", ca.toString());
    }
    m.put("spark.strata.elasticsearch.userEnv", "ES_USER");
    m.put("spark.strata.elasticsearch.passwordEnv", "ES_PASSWORD");
    m.put("spark.strata.elasticsearch.index", index);
    m.put("spark.strata.elasticsearch.shards", "1");
    m.put("spark.strata.elasticsearch.replicas", "0");
    m.put("spark.strata.elasticsearch.bulkActions", "50");
    return IngestConf.from(m);
  }

  static Iterator<Row> records(int n) {
    List<Row> rows = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      String json = "{\"sensor\":\"s-" + (i % 7) + "\",\"value\":" + i + "}";
      rows.add(RowFactory.create("sensor-readings", i % 3, (long) i, json.getBytes(StandardCharsets.UTF_8),
          new Timestamp(1_700_000_000_000L + i)));
    }
    return rows.iterator();
  }

  @Test
  void everyRecordOverTlsWithTheCaTheOperatorMounts() throws Exception {
    IngestConf conf = conf("readings-tls", search.url(), caFile);
    IngestJob.setUpIndex(conf);
    PartitionWriter.Summary s = new PartitionWriter(conf, () -> EsClients.shared(conf)).call(records(300)).next();
    assertEquals(300, s.documents(), "documents written");
    assertEquals(0, s.deadLetters(), "dead letters");
    assertEquals(300, search.count("readings-tls"), "documents in the index over TLS");
  }

  @Test
  void aCaThatDidNotSignTheServerStopsTheJobAtStart() throws Exception {
    Path other = new TestCertificates("another-ca").writeCa(dir.resolve("other").resolve("ca.crt"));
    IngestConf conf = conf("readings-other-ca", search.url(), other);
    IllegalStateException e = assertThrows(IllegalStateException.class, () -> IngestJob.setUpIndex(conf));
    assertTrue(e.getMessage().contains("spark.strata.elasticsearch.url=" + search.url())
        && e.getMessage().contains("spark.strata.elasticsearch.caPath=" + other), e.getMessage());
    assertTrue(e.getMessage().contains("PKIX") || e.getMessage().contains("certification path"), e.getMessage());
  }

  @Test
  void aNameTheCertificateDoesNotHoldIsRefused() {
    // The node's address without a name: the certificate holds names, not 127.0.0.1.
    String byAddress = search.url().replace("localhost", "127.0.0.1");
    IngestConf conf = conf("readings-by-address", byAddress, caFile);
    IllegalStateException e = assertThrows(IllegalStateException.class, () -> IngestJob.setUpIndex(conf));
    // Apache HttpAsyncClient's DefaultHostnameVerifier: "Host name '127.0.0.1' does not match the
    // certificate subject provided by the peer".
    assertTrue(e.getMessage().contains("127.0.0.1") && e.getMessage().contains("does not match"), e.getMessage());
  }

  @Test
  void withoutTheCaTheJobDoesNotTrustTheServer() {
    IngestConf conf = conf("readings-no-ca", search.url(), null);
    IllegalStateException e = assertThrows(IllegalStateException.class, () -> IngestJob.setUpIndex(conf));
    assertTrue(e.getMessage().contains("PKIX") || e.getMessage().contains("certification path"), e.getMessage());
  }
}
