package dev.strata.ingest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ExecutionException;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.AuthorizationException;
import org.apache.kafka.common.errors.GroupAuthorizationException;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.opensearch.action.admin.indices.settings.get.GetSettingsResponse;
import org.opensearch.search.SearchHit;

/**
 * The job end to end against real components in one JVM: a Kafka broker in KRaft mode, Spark in
 * local mode, an OpenSearch node (EmbeddedSearch). The job is started as its main class starts it
 * (IngestJob.start), stopped mid-stream, and restarted from its checkpoint.
 *
 * <p>With the operator's credentials: the job reads Kafka on a SCRAM-SHA-512 listener as a user
 * whose ACLs are exactly those of the KafkaUser the operator builds (read from its golden file,
 * internal/desired/testdata), under Kafka's StandardAuthorizer, and writes to a search node that
 * requires its user and password; both come from the environment, as the operator gives them.
 */
class IngestJobTest {
  static final String TOPIC = "sensor-readings";
  static final String INDEX = "sensor-readings";
  static final int PARTITIONS = 3;

  /** The job's Kafka and Elasticsearch user, as the operator names them: <pipeline>-ingest. */
  static final String USER = "sensors-ingest";
  static final String KAFKA_PASSWORD = "kafka-password-of-the-test";
  static final String ES_PASSWORD = "es-password-of-the-test";
  /** The KafkaUser the operator builds for the pipeline "sensors" reading "sensor-readings". */
  static final Path KAFKA_USER = Path.of("../../internal/desired/testdata/"
      + "strata-job.kafkauser-sensors-ingest.golden.yaml");

  @TempDir static Path dir;
  static EmbeddedKafka kafka;
  static EmbeddedSearch search;
  static SparkSession spark;

  @BeforeAll
  static void start() throws Exception {
    kafka = new EmbeddedKafka(dir, true);
    kafka.createScramUser(USER, KAFKA_PASSWORD);
    kafka.createAcls(KafkaUserAcls.from(KAFKA_USER));
    // The variables the operator fills from the KafkaUser's and the Elasticsearch user's Secrets.
    Map<String, String> env = Map.of(
        "KAFKA_SASL_JAAS_CONFIG", EmbeddedKafka.jaas(USER, KAFKA_PASSWORD),
        "ES_USER", USER,
        "ES_PASSWORD", ES_PASSWORD);
    Env.lookup = env::get;
    search = new EmbeddedSearch(dir);
    ElasticsearchCompat.requireBasicAuth(USER, ES_PASSWORD);
    spark = SparkSession.builder()
        .master("local[2]")
        .appName("IngestJobTest")
        // The driver's UI serves the Prometheus endpoint the operator's PodMonitor scrapes, set
        // up as internal/desired/sparkconf.go sets it.
        .config("spark.ui.enabled", "true")
        .config("spark.ui.port", "0")
        .config("spark.metrics.conf.*.sink.prometheusServlet.class",
            "org.apache.spark.metrics.sink.PrometheusServlet")
        .config("spark.metrics.conf.*.sink.prometheusServlet.path", "/metrics/prometheus")
        .config("spark.metrics.namespace", "sensors")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.sql.shuffle.partitions", "2")
        .getOrCreate();
  }

  @AfterAll
  static void stop() throws Exception {
    Env.lookup = System::getenv;
    ElasticsearchCompat.requiredAuthorization = null;
    if (spark != null) {
      spark.stop();
    }
    if (search != null) {
      search.close();
    }
    if (kafka != null) {
      kafka.close();
    }
  }

  static Map<String, String> conf(String pipeline, String topic, String index) {
    Map<String, String> m = new HashMap<>();
    m.put("spark.strata.pipeline", pipeline);
    m.put("spark.strata.checkpointDir", dir.resolve("checkpoint-" + pipeline).toString());
    m.put("spark.strata.kafka.bootstrapServers", kafka.saslBootstrap());
    m.put("spark.strata.kafka.saslJaasConfigEnv", "KAFKA_SASL_JAAS_CONFIG");
    m.put("spark.strata.elasticsearch.userEnv", "ES_USER");
    m.put("spark.strata.elasticsearch.passwordEnv", "ES_PASSWORD");
    m.put("spark.strata.kafka.topic", topic);
    m.put("spark.strata.kafka.maxOffsetsPerTrigger", "100");
    m.put("spark.strata.kafka.minPartitions", "2");
    m.put("spark.strata.elasticsearch.url", search.url());
    m.put("spark.strata.elasticsearch.index", index);
    m.put("spark.strata.elasticsearch.shards", "2");
    m.put("spark.strata.elasticsearch.replicas", "1");
    m.put("spark.strata.elasticsearch.bulkActions", "40");
    // As internal/desired/indexlifecycle.go writes them: bytes and seconds.
    m.put("spark.strata.elasticsearch.rollover.maxPrimaryShardSize", "53687091200b");
    m.put("spark.strata.elasticsearch.rollover.maxAge", "86400s");
    m.put("spark.strata.elasticsearch.delete.minAge", "604800s");
    return m;
  }

  /** The record at i: a valid reading, or one of the malformed kinds. */
  static byte[] record(int i) {
    if (i == 7) {
      return "{\"sensor\": \"s-7\", \"value\": ".getBytes(StandardCharsets.UTF_8); // not JSON
    }
    if (i == 123) {
      return "[1, 2, 3]".getBytes(StandardCharsets.UTF_8); // not an object
    }
    if (i == 250) {
      return null; // a tombstone
    }
    if (i == 470) {
      // valid JSON, but "value" is mapped as a number by then: Elasticsearch refuses it
      return "{\"sensor\": \"s-470\", \"value\": \"high\"}".getBytes(StandardCharsets.UTF_8);
    }
    return ("{\"sensor\": \"s-" + (i % 17) + "\", \"value\": " + i + ", \"pad\": \""
        + "x".repeat(200) + "\"}").getBytes(StandardCharsets.UTF_8);
  }

  static final ObjectMapper JSON = new ObjectMapper();

  static final Set<Integer> MALFORMED = Set.of(7, 123, 250, 470);

  static void produce(String topic, int from, int to) throws Exception {
    Map<String, Object> p = new HashMap<>();
    p.put("bootstrap.servers", kafka.bootstrap());
    p.put("key.serializer", "org.apache.kafka.common.serialization.ByteArraySerializer");
    p.put("value.serializer", "org.apache.kafka.common.serialization.ByteArraySerializer");
    p.put("linger.ms", "5");
    try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p)) {
      for (int i = from; i < to; i++) {
        producer.send(new ProducerRecord<>(topic, i % PARTITIONS, null, record(i)));
      }
      producer.flush();
    }
  }

  /** The consumer group's committed offsets, summed over the topic's partitions. */
  static long committed(String group) throws Exception {
    try (Admin a = kafka.admin()) {
      Map<TopicPartition, OffsetAndMetadata> m =
          a.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get();
      return m.values().stream().mapToLong(OffsetAndMetadata::offset).sum();
    }
  }

  static long endOffsets(String topic) throws Exception {
    try (Admin a = kafka.admin()) {
      Map<TopicPartition, OffsetSpec> req = new HashMap<>();
      for (int p = 0; p < PARTITIONS; p++) {
        req.put(new TopicPartition(topic, p), OffsetSpec.latest());
      }
      return a.listOffsets(req).all().get().values().stream()
          .mapToLong(r -> r.offset()).sum();
    }
  }

  /**
   * Forgets that the last batch was written: Structured Streaming then runs it again on restart,
   * as after a driver killed between writing a batch and recording it in the checkpoint. A batch
   * the stopped query had planned but not written (its offsets logged, no commit) is forgotten
   * too, as if the driver died before planning it: otherwise the restart runs only that batch,
   * since Spark replays the last batch alone when the commits trail the offsets by more than one
   * (MicroBatchExecution.populateStartOffsets).
   */
  static long forgetLastCommit(String pipeline) throws Exception {
    Path checkpoint = dir.resolve("checkpoint-" + pipeline);
    long last = lastBatch(checkpoint.resolve("commits"));
    assertTrue(last >= 0, "no batch committed yet");
    deleteBatch(checkpoint.resolve("commits"), last);
    for (long planned = lastBatch(checkpoint.resolve("offsets")); planned > last; planned--) {
      deleteBatch(checkpoint.resolve("offsets"), planned);
    }
    return last;
  }

  /** The highest batch id with a file in a checkpoint log, -1 for none. */
  static long lastBatch(Path log) {
    long last = -1;
    for (String name : log.toFile().list()) {
      if (name.matches("[0-9]+")) {
        last = Math.max(last, Long.parseLong(name));
      }
    }
    return last;
  }

  static void deleteBatch(Path log, long batch) throws Exception {
    Files.deleteIfExists(log.resolve(String.valueOf(batch)));
    Files.deleteIfExists(log.resolve("." + batch + ".crc"));
  }

  /**
   * A dead-letter index of a release before the dead letters' lifecycle is a plain index under
   * the alias's name: it is kept and written to as before (an alias cannot take its name), and
   * the start does not fail; a pipeline without one gets the alias and its first write index.
   */
  @Test
  void aDeadLetterIndexFromBeforeItsLifecycleIsKept() throws Exception {
    search.client().admin().indices().prepareCreate("legacy-deadletter").get();
    IngestConf legacy = IngestConf.from(conf("legacy", TOPIC, "legacy"));
    co.elastic.clients.elasticsearch.ElasticsearchClient es = EsClients.open(legacy);
    try {
      IndexLifecycle.apply(es, legacy);
    } finally {
      EsClients.close(es);
    }
    assertFalse(search.client().admin().indices().prepareExists("legacy-deadletter-000001").get()
        .isExists(), "a write index beside the old dead-letter index");
    assertTrue(search.client().admin().indices().prepareExists("legacy-deadletter").get().isExists());
    assertTrue(search.client().admin().indices().prepareExists("legacy-000001").get().isExists(),
        "the index's own lifecycle is set up all the same");
  }

  @Test
  void everyRecordOnceAcrossARestartMidStream() throws Exception {
    int total = 600;
    kafka.createTopic(TOPIC, PARTITIONS);
    produce(TOPIC, 0, 400);
    IngestConf conf = IngestConf.from(conf("sensors", TOPIC, INDEX));

    // First run: stopped as soon as it has written a batch, with batches still to come.
    IngestJob.Running first = IngestJob.start(spark, conf);
    long deadline = System.currentTimeMillis() + 120_000;
    while (first.query().recentProgress().length == 0 && first.query().isActive()
        && System.currentTimeMillis() < deadline) {
      Thread.sleep(50);
    }
    assertTrue(first.query().isActive(), () -> "the query failed: " + first.query().exception());
    first.query().stop();
    first.sink().close();
    long firstWritten = first.sink().documents() + first.sink().deadLetters();
    assertTrue(firstWritten > 0 && firstWritten < 400, "the first run wrote " + firstWritten
        + " of 400 records: not stopped mid-stream");
    long committedFirst = committed("sensors");
    assertTrue(committedFirst >= firstWritten, "committed offsets " + committedFirst);
    long replayed = forgetLastCommit("sensors");

    // Second run, from the checkpoint, with more records arriving.
    produce(TOPIC, 400, total);
    IngestJob.Running second = IngestJob.start(spark, conf);
    second.query().processAllAvailable();
    // While the query runs, the driver's Prometheus endpoint serves its rates and the job's counts.
    HttpResponse<String> scrape = HttpClient.newBuilder()
        .followRedirects(HttpClient.Redirect.NORMAL).build()
        .send(HttpRequest.newBuilder(URI.create(
            spark.sparkContext().uiWebUrl().get() + "/metrics/prometheus/")).build(),
            HttpResponse.BodyHandlers.ofString());
    String metrics = scrape.statusCode() + "\n" + scrape.body();
    for (String name : new String[] {"spark_streaming_sensors_inputRate_total",
        "spark_streaming_sensors_processingRate_total", "spark_streaming_sensors_latency",
        "AccumulatorSource_strata_documents", "AccumulatorSource_strata_deadLetters"}) {
      assertTrue(metrics.contains(name), () -> "no " + name + " in\n" + metrics);
    }
    second.query().stop();
    second.sink().close();
    long written = firstWritten + second.sink().documents() + second.sink().deadLetters();
    assertTrue(written > total, "batch " + replayed + " was not replayed: " + written
        + " records written in all for " + total);

    // Exactly once: every record is one document or one dead letter, however often written.
    assertEquals(total - MALFORMED.size(), search.count(INDEX));
    assertEquals(MALFORMED.size(), search.count(conf.esDeadLetterIndex()));
    assertTrue(search.client().prepareGet(INDEX + "-000001", TOPIC + "-1-0").get().isExists(),
        "document ids are topic-partition-offset");

    // Dead letters carry their reasons.
    List<String> reasons = new ArrayList<>();
    for (SearchHit h : search.client().prepareSearch(conf.esDeadLetterIndex()).setSize(10).get()
        .getHits().getHits()) {
      reasons.add(String.valueOf(h.getSourceAsMap().get("reason")));
    }
    String all = String.join(" | ", reasons);
    assertTrue(all.contains("not JSON"), all);
    assertTrue(all.contains("not a JSON object"), all);
    assertTrue(all.contains("no value"), all);
    assertTrue(all.contains("rejected by Elasticsearch: mapper_parsing_exception"), all);

    // The consumer group has the end offsets: lag 0.
    assertEquals(endOffsets(TOPIC), committed("sensors"));
    assertTrue(committed("sensors") > committedFirst);

    // The index lifecycle: the write index from the template, with the planned shards and
    // replicas and the policy; the policy as the plan sets it.
    GetSettingsResponse s = search.client().admin().indices()
        .prepareGetSettings(INDEX + "-000001").get();
    assertEquals("2", s.getSetting(INDEX + "-000001", "index.number_of_shards"));
    assertEquals("1", s.getSetting(INDEX + "-000001", "index.number_of_replicas"));
    assertEquals(INDEX, s.getSetting(INDEX + "-000001", "index.lifecycle.name"));
    assertEquals(INDEX, s.getSetting(INDEX + "-000001", "index.lifecycle.rollover_alias"));
    // Dead letters: behind their own alias, one shard, a lifecycle of their own (not the index's).
    String deadLetters = conf.esDeadLetterIndex() + "-000001";
    GetSettingsResponse dl = search.client().admin().indices().prepareGetSettings(deadLetters).get();
    assertEquals("1", dl.getSetting(deadLetters, "index.number_of_shards"));
    assertEquals(conf.esDeadLetterIndex(), dl.getSetting(deadLetters, "index.lifecycle.name"));
    assertEquals(conf.esDeadLetterIndex(), dl.getSetting(deadLetters, "index.lifecycle.rollover_alias"));
    assertTrue(ElasticsearchCompat.POLICIES.containsKey(conf.esDeadLetterIndex()),
        "no ILM policy for the dead letters: " + ElasticsearchCompat.POLICIES.keySet());
    String policy = ElasticsearchCompat.POLICIES.get(INDEX);
    assertEquals(JSON.readTree("{\"policy\":{\"phases\":{\"hot\":{\"actions\":{\"rollover\":{\"max_age\":\"86400s\","
        + "\"max_primary_shard_size\":\"53687091200b\"}}},\"delete\":{\"min_age\":\"604800s\","
        + "\"actions\":{\"delete\":{}}}}}}"), JSON.readTree(policy));

    // Everything went through the job's own credentials: the search node let requests through
    // only with them, and the job's Kafka user may do nothing beyond its KafkaUser's ACLs.
    assertTrue(ElasticsearchCompat.AUTHENTICATED.get() > 0, "no request authenticated");
    try (Admin asJob = kafka.adminAs(USER, KAFKA_PASSWORD)) {
      ExecutionException e = assertThrows(ExecutionException.class, () -> asJob.createTopics(
          List.of(new NewTopic("not-the-pipelines", 1, (short) 1))).all().get());
      assertTrue(e.getCause() instanceof AuthorizationException, e.toString());
      e = assertThrows(ExecutionException.class, () -> asJob.alterConsumerGroupOffsets("another-group",
          Map.of(new TopicPartition(TOPIC, 0), new OffsetAndMetadata(0))).all().get());
      assertTrue(e.getCause() instanceof GroupAuthorizationException, e.toString());
      e = assertThrows(ExecutionException.class, () -> asJob.describeTopics(List.of("__consumer_offsets"))
          .allTopicNames().get());
      assertTrue(e.getCause() instanceof AuthorizationException, e.toString());
    }

    // Streaming metrics are on.
    assertEquals("true", spark.conf().get(IngestJob.STREAMING_METRICS));
  }
}
