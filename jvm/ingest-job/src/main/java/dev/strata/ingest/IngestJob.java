package dev.strata.ingest;

import java.util.HashMap;
import java.util.Map;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.streaming.StreamingQuery;
import scala.Tuple2;

/**
 * The pipeline's Spark job: the pipeline's Kafka topic into its Elasticsearch index with Spark
 * Structured Streaming. Configured only by the spark.strata.* keys (IngestConf); a missing or
 * bad key stops it at start, naming the key. See docs/ingest-job.md.
 *
 * <p>Exactly-once effect: the Kafka offsets live in the checkpoint (on the volume the operator
 * mounts); a restart replays the batch whose end the checkpoint had not recorded, and the
 * replayed documents carry the same ids, so they overwrite instead of adding copies.
 */
public final class IngestJob {
  private IngestJob() {}

  public static void main(String[] args) throws Exception {
    // No appName here: it would override spark-submit's --name, the SparkApplication's name the
    // Spark operator passes, which Spark's executor metrics carry as application_name and the
    // alerts and the autoscaler select by (internal/lab showed them empty with one set).
    SparkSession spark = SparkSession.builder()
        .config(STREAMING_METRICS, "true")
        .getOrCreate();
    int status = 1;
    try {
      IngestConf conf = IngestConf.from(settings(spark));
      Running job = start(spark, conf);
      try (AutoCloseable scaler = followExecutorTarget(spark, conf)) {
        job.query().awaitTermination();
        status = 0;
      } finally {
        job.sink().close();
      }
    } catch (Exception e) {
      System.err.println("strata-ingest: stopped: " + e);
      e.printStackTrace();
    } finally {
      // The job ends with its query, and its JVM with it. Returning from main is not enough:
      // spark-submit stops the context, but non-daemon threads (the Elasticsearch client's I/O
      // reactor) keep the driver's JVM up, a driver pod RUNNING with no query that the Spark
      // operator never restarts (internal/lab found it so). A non-zero exit fails the driver,
      // and the SparkApplication's restart policy submits the job again from its checkpoint.
      spark.stop();
      System.exit(status);
    }
  }

  /** Spark's input and processing rates of the query, in its metrics system. */
  static final String STREAMING_METRICS = "spark.sql.streaming.metricsEnabled";

  /** The started query and its sink (whose consumer-group committer the caller closes). */
  record Running(StreamingQuery query, BatchSink sink) {}

  /**
   * Puts the index lifecycle (policy, templates, the first write index): the job's first request
   * to Elasticsearch, so an endpoint it cannot reach or trust (a CA that did not sign the server's
   * certificate, a name the certificate does not hold, wrong credentials) stops the job at start,
   * with the endpoint and the setting to check named.
   */
  static void setUpIndex(IngestConf conf) {
    try {
      IndexLifecycle.apply(EsClients.shared(conf), conf);
    } catch (Exception e) {
      Throwable root = e;
      while (root.getCause() != null && root.getCause() != root) {
        root = root.getCause();
      }
      throw new IllegalStateException("cannot set up the index lifecycle at " + IngestConf.ES_URL + "="
          + conf.esUrl() + (conf.esCaPath() == null ? "" : " (trusting " + IngestConf.ES_CA_PATH + "="
          + conf.esCaPath() + ")") + ": " + root, e);
    }
  }

  /**
   * Keeps the executor count at the target the operator publishes in the ConfigMap
   * spark.strata.executors.configMap names, in the driver's namespace (spark.kubernetes.namespace),
   * while the query runs; without the key, spark.executor.instances holds, as in Spark.
   */
  static AutoCloseable followExecutorTarget(SparkSession spark, IngestConf conf) {
    if (conf.executorsConfigMap() == null) {
      return () -> {};
    }
    String namespace = spark.sparkContext().getConf().get("spark.kubernetes.namespace", null);
    ConfigMapTarget source = new ConfigMapTarget(namespace, conf.executorsConfigMap());
    ExecutorScaler scaler = ExecutorScaler.start(spark.sparkContext(), source, TARGET_PERIOD_MILLIS);
    return () -> {
      scaler.close();
      source.close();
    };
  }

  /**
   * How often the driver reads its executor target: one GET of one ConfigMap, against the
   * autoscaler's decisions a minute or more apart.
   */
  static final long TARGET_PERIOD_MILLIS = 5_000;

  /** Every Spark setting, for IngestConf. */
  static Map<String, String> settings(SparkSession spark) {
    Map<String, String> m = new HashMap<>();
    for (Tuple2<String, String> kv : spark.sparkContext().getConf().getAll()) {
      m.put(kv._1(), kv._2());
    }
    return m;
  }

  /**
   * Sets up the index lifecycle, then starts the query: the topic's records (only the columns the
   * conversion needs), each micro-batch through BatchSink.
   */
  static Running start(SparkSession spark, IngestConf conf) throws Exception {
    spark.conf().set(STREAMING_METRICS, "true");
    setUpIndex(conf);
    Dataset<Row> records = spark.readStream()
        .format("kafka")
        .options(KafkaSettings.source(conf))
        .load()
        .select("topic", "partition", "offset", "value", "timestamp");
    BatchSink sink = new BatchSink(conf, spark.sparkContext());
    StreamingQuery query = records.writeStream()
        .queryName(conf.pipeline())
        .option("checkpointLocation", conf.checkpointDir())
        .foreachBatch(sink)
        .start();
    return new Running(query, sink);
  }
}
