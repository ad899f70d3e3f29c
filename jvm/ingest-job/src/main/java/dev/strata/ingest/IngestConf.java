package dev.strata.ingest;

import java.net.URI;
import java.net.URISyntaxException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * The job's whole configuration, read from the spark.strata.* keys the operator sets from the
 * pipeline's plan and spec (docs/ingest-job.md lists them). Nothing else configures the job: no
 * arguments, no files. A missing or bad key stops the job at start with a message naming the key,
 * and an unknown spark.strata.* key (a typo, or a key of a newer operator) is refused too, so a
 * setting never silently does nothing. Keys under spark.strata.shuffle. belong to the tiered
 * shuffle plugin and are left alone.
 */
public record IngestConf(
    String pipeline,
    String checkpointDir,
    String kafkaBootstrap,
    String kafkaTopic,
    String kafkaSaslJaasConfigEnv,
    long maxOffsetsPerTrigger,
    int minPartitions,
    String esUrl,
    String esCaPath,
    String esUserEnv,
    String esPasswordEnv,
    String esIndex,
    String esDeadLetterIndex,
    int esShards,
    int esReplicas,
    int bulkActions,
    long bulkBytes,
    String rolloverMaxAge,
    String rolloverMaxPrimaryShardSize,
    String deleteAfter,
    RecordFormat recordFormat,
    String idField,
    String timestampField,
    String executorsConfigMap) implements java.io.Serializable {

  /** The prefix of every key the job reads. */
  public static final String PREFIX = "spark.strata.";

  /** The shuffle plugin's keys (jvm/shuffle-plugin), not the job's. */
  static final String SHUFFLE_PREFIX = "spark.strata.shuffle.";

  /** How a record's value becomes a document. */
  public enum RecordFormat {
    /** The value is a JSON object, indexed as is (plus @timestamp). */
    JSON,
    /** The value is UTF-8 text, indexed as the field "message". */
    RAW
  }

  static final String PIPELINE = PREFIX + "pipeline";
  static final String CHECKPOINT_DIR = PREFIX + "checkpointDir";
  static final String KAFKA_BOOTSTRAP = PREFIX + "kafka.bootstrapServers";
  static final String KAFKA_TOPIC = PREFIX + "kafka.topic";
  static final String KAFKA_JAAS_ENV = PREFIX + "kafka.saslJaasConfigEnv";
  static final String MAX_OFFSETS = PREFIX + "kafka.maxOffsetsPerTrigger";
  static final String MIN_PARTITIONS = PREFIX + "kafka.minPartitions";
  static final String ES_URL = PREFIX + "elasticsearch.url";
  static final String ES_CA_PATH = PREFIX + "elasticsearch.caPath";
  static final String ES_USER_ENV = PREFIX + "elasticsearch.userEnv";
  static final String ES_PASSWORD_ENV = PREFIX + "elasticsearch.passwordEnv";
  static final String ES_INDEX = PREFIX + "elasticsearch.index";
  static final String ES_DEAD_LETTER_INDEX = PREFIX + "elasticsearch.deadLetterIndex";
  static final String ES_SHARDS = PREFIX + "elasticsearch.shards";
  static final String ES_REPLICAS = PREFIX + "elasticsearch.replicas";
  static final String BULK_ACTIONS = PREFIX + "elasticsearch.bulkActions";
  static final String BULK_BYTES = PREFIX + "elasticsearch.bulkBytes";
  static final String ROLLOVER_MAX_AGE = PREFIX + "elasticsearch.rollover.maxAge";
  static final String ROLLOVER_MAX_SIZE = PREFIX + "elasticsearch.rollover.maxPrimaryShardSize";
  static final String DELETE_AFTER = PREFIX + "elasticsearch.delete.minAge";
  static final String RECORD_FORMAT = PREFIX + "record.format";
  static final String ID_FIELD = PREFIX + "record.idField";
  static final String TIMESTAMP_FIELD = PREFIX + "record.timestampField";
  /** The ConfigMap whose "executors" the driver keeps its executor count at (ExecutorScaler). */
  static final String EXECUTORS_CONFIG_MAP = PREFIX + "executors.configMap";

  /** Every key the job knows; any other spark.strata.* key (outside the shuffle's) is refused. */
  static final Set<String> KNOWN = Set.of(
      PIPELINE, CHECKPOINT_DIR, KAFKA_BOOTSTRAP, KAFKA_TOPIC, KAFKA_JAAS_ENV, MAX_OFFSETS,
      MIN_PARTITIONS, ES_URL, ES_CA_PATH, ES_USER_ENV, ES_PASSWORD_ENV, ES_INDEX,
      ES_DEAD_LETTER_INDEX, ES_SHARDS, ES_REPLICAS, BULK_ACTIONS, BULK_BYTES, ROLLOVER_MAX_AGE,
      ROLLOVER_MAX_SIZE, DELETE_AFTER, RECORD_FORMAT, ID_FIELD, TIMESTAMP_FIELD,
      EXECUTORS_CONFIG_MAP);

  /** The Kafka consumer group the job commits its progress to: the pipeline's name. */
  public String consumerGroup() {
    return pipeline;
  }

  /**
   * Reads the configuration from Spark's settings (SparkConf.getAll). Every problem is collected
   * and reported at once, each naming its key, so one failed start shows all of them.
   */
  public static IngestConf from(Map<String, String> settings) {
    Keys k = new Keys(settings);
    for (String key : new TreeSet<>(settings.keySet())) {
      if (key.startsWith(PREFIX) && !key.startsWith(SHUFFLE_PREFIX) && !KNOWN.contains(key)) {
        k.problems.add(key + ": unknown key (docs/ingest-job.md lists the job's keys)");
      }
    }
    String userEnv = k.optional(ES_USER_ENV, null);
    String passwordEnv = k.optional(ES_PASSWORD_ENV, null);
    if ((userEnv == null) != (passwordEnv == null)) {
      k.problems.add((userEnv == null ? ES_USER_ENV : ES_PASSWORD_ENV)
          + ": missing (" + ES_USER_ENV + " and " + ES_PASSWORD_ENV + " are set together)");
    }
    String index = k.indexName(ES_INDEX, k.required(ES_INDEX));
    IngestConf conf = new IngestConf(
        k.required(PIPELINE),
        k.required(CHECKPOINT_DIR),
        k.required(KAFKA_BOOTSTRAP),
        k.required(KAFKA_TOPIC),
        k.optional(KAFKA_JAAS_ENV, null),
        k.positiveLong(MAX_OFFSETS, null),
        k.positiveInt(MIN_PARTITIONS, "1"),
        k.url(ES_URL),
        k.optional(ES_CA_PATH, null),
        userEnv,
        passwordEnv,
        index,
        k.indexName(ES_DEAD_LETTER_INDEX,
            k.optional(ES_DEAD_LETTER_INDEX, index == null ? null : index + "-deadletter")),
        k.positiveInt(ES_SHARDS, null),
        k.nonNegativeInt(ES_REPLICAS),
        k.positiveInt(BULK_ACTIONS, "1000"),
        k.positiveLong(BULK_BYTES, String.valueOf(5L << 20)),
        k.duration(ROLLOVER_MAX_AGE, "1d"),
        k.size(ROLLOVER_MAX_SIZE, "50gb"),
        k.duration(DELETE_AFTER, null),
        k.format(),
        k.optional(ID_FIELD, null),
        k.optional(TIMESTAMP_FIELD, null),
        k.objectName(EXECUTORS_CONFIG_MAP));
    if (!k.problems.isEmpty()) {
      throw new IllegalArgumentException(
          "Strata ingestion job: bad configuration: " + String.join("; ", k.problems));
    }
    return conf;
  }

  /** Reads keys and collects what is wrong with them. */
  private static final class Keys {
    final Map<String, String> settings;
    final List<String> problems = new ArrayList<>();

    Keys(Map<String, String> settings) {
      this.settings = settings;
    }

    String optional(String key, String dflt) {
      String v = settings.get(key);
      if (v == null) {
        return dflt;
      }
      v = v.trim();
      if (v.isEmpty()) {
        problems.add(key + ": empty");
        return dflt;
      }
      return v;
    }

    String required(String key) {
      String v = optional(key, null);
      if (v == null && !settings.containsKey(key)) {
        problems.add(key + ": missing");
      }
      return v;
    }

    long positiveLong(String key, String dflt) {
      String v = dflt == null ? required(key) : optional(key, dflt);
      if (v == null) {
        return 0;
      }
      try {
        long n = Long.parseLong(v);
        if (n > 0) {
          return n;
        }
      } catch (NumberFormatException e) {
        // reported below
      }
      problems.add(key + ": \"" + v + "\" is not a positive whole number");
      return 0;
    }

    int positiveInt(String key, String dflt) {
      long n = positiveLong(key, dflt);
      if (n > Integer.MAX_VALUE) {
        problems.add(key + ": " + n + " is more than " + Integer.MAX_VALUE);
        return 0;
      }
      return (int) n;
    }

    int nonNegativeInt(String key) {
      String v = required(key);
      if (v == null) {
        return 0;
      }
      try {
        int n = Integer.parseInt(v);
        if (n >= 0) {
          return n;
        }
      } catch (NumberFormatException e) {
        // reported below
      }
      problems.add(key + ": \"" + v + "\" is not a whole number ≥ 0");
      return 0;
    }

    String url(String key) {
      String v = required(key);
      if (v == null) {
        return null;
      }
      try {
        URI u = new URI(v);
        if (("https".equals(u.getScheme()) || "http".equals(u.getScheme())) && u.getHost() != null) {
          return v;
        }
      } catch (URISyntaxException e) {
        // reported below
      }
      problems.add(key + ": \"" + v + "\" is not an http(s)://host[:port] URL");
      return null;
    }

    /** Elasticsearch index names: lower case, no spaces or \ / * ? " < > | , #, not . or _ first. */
    String indexName(String key, String v) {
      if (v != null && !v.matches("[a-z0-9][a-z0-9_+.-]{0,199}")) {
        problems.add(key + ": \"" + v + "\" is not a valid index name (lower case letters, digits, - _ + .)");
      }
      return v;
    }

    /** Elasticsearch time units as ILM takes them: 30d, 12h, 90m. */
    String duration(String key, String dflt) {
      String v = dflt == null ? optional(key, null) : optional(key, dflt);
      if (v != null && !v.matches("[1-9][0-9]*(d|h|m|s)")) {
        problems.add(key + ": \"" + v + "\" is not a duration like 7d, 12h, 30m");
      }
      return v;
    }

    /** Elasticsearch byte sizes as ILM takes them: 50gb, 512mb. */
    String size(String key, String dflt) {
      String v = optional(key, dflt);
      if (v != null && !v.matches("[1-9][0-9]*(b|kb|mb|gb|tb)")) {
        problems.add(key + ": \"" + v + "\" is not a size like 50gb, 512mb");
      }
      return v;
    }

    /** A Kubernetes object name (RFC 1123 subdomain), or null when the key is absent. */
    String objectName(String key) {
      String v = optional(key, null);
      if (v != null && (v.length() > 253 || !v.matches("[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*"))) {
        problems.add(key + ": \"" + v + "\" is not a Kubernetes object name (lower case letters, digits, - and .)");
      }
      return v;
    }

    RecordFormat format() {
      String v = optional(RECORD_FORMAT, "json");
      switch (v) {
        case "json":
          return RecordFormat.JSON;
        case "raw":
          return RecordFormat.RAW;
        default:
          problems.add(RECORD_FORMAT + ": \"" + v + "\" is neither json nor raw");
          return RecordFormat.JSON;
      }
    }
  }
}
