package dev.strata.ingest;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerTaskEnd;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.streaming.StreamingQueryProgress;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * make job-bench (mvn test -Pbench -pl ingest-job): the job end to end, Kafka → index, on the
 * sensor-pipeline study's 9,028-byte JSON records, on this machine. Prints records/s, the job's
 * CPU time per record (Spark tasks, plus the Elasticsearch client's I/O threads, which send the
 * bulk requests outside the tasks) and records/s per executor core (1 / CPU time per record: what
 * one core busy with the job alone would move). Broker, search node and Spark share the JVM
 * and the machine's cores, so the wall-clock rate is a lower bound of the job's own.
 */
@Tag("benchmark")
class IngestJobBenchmark {
  static final int RECORD_BYTES = 9_028;

  @TempDir Path dir;

  static byte[] record(int i) {
    String head = "{\"sensor\":\"s-" + (i % 500) + "\",\"ts\":" + (1_700_000_000_000L + i)
        + ",\"value\":" + (i % 1000) + ",\"payload\":\"";
    String tail = "\"}";
    return (head + "x".repeat(RECORD_BYTES - head.length() - tail.length()) + tail)
        .getBytes(StandardCharsets.UTF_8);
  }

  @Test
  void endToEnd() throws Exception {
    int records = Integer.getInteger("strata.bench.records", 20_000);
    int cores = 2;
    try (EmbeddedKafka kafka = new EmbeddedKafka(dir);
        EmbeddedSearch search = new EmbeddedSearch(dir)) {
      kafka.createTopic("bench", cores);
      Map<String, Object> p = new HashMap<>();
      p.put("bootstrap.servers", kafka.bootstrap());
      p.put("key.serializer", "org.apache.kafka.common.serialization.ByteArraySerializer");
      p.put("value.serializer", "org.apache.kafka.common.serialization.ByteArraySerializer");
      p.put("linger.ms", "20");
      p.put("batch.size", String.valueOf(1 << 20));
      try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p)) {
        for (int i = 0; i < records; i++) {
          producer.send(new ProducerRecord<>("bench", i % cores, null, record(i)));
        }
        producer.flush();
      }
      SparkSession spark = SparkSession.builder()
          .master("local[" + cores + "]")
          .appName("IngestJobBenchmark")
          .config("spark.ui.enabled", "false")
          .config("spark.driver.bindAddress", "127.0.0.1")
          .config("spark.driver.host", "127.0.0.1")
          .getOrCreate();
      AtomicLong taskCpuNanos = new AtomicLong();
      spark.sparkContext().addSparkListener(new SparkListener() {
        @Override
        public void onTaskEnd(SparkListenerTaskEnd end) {
          if (end.taskMetrics() != null) {
            taskCpuNanos.addAndGet(end.taskMetrics().executorCpuTime());
          }
        }
      });
      try {
        Map<String, String> m = new HashMap<>();
        m.put("spark.strata.pipeline", "bench");
        m.put("spark.strata.checkpointDir", Files.createDirectories(dir.resolve("ckpt")).toString());
        m.put("spark.strata.kafka.bootstrapServers", kafka.bootstrap());
        m.put("spark.strata.kafka.topic", "bench");
        m.put("spark.strata.kafka.maxOffsetsPerTrigger", "4000");
        m.put("spark.strata.kafka.minPartitions", String.valueOf(cores));
        m.put("spark.strata.elasticsearch.url", search.url());
        m.put("spark.strata.elasticsearch.index", "bench");
        m.put("spark.strata.elasticsearch.shards", "1");
        m.put("spark.strata.elasticsearch.replicas", "0");
        IngestConf conf = IngestConf.from(m);
        long cpu0 = processCpu();
        long t0 = System.nanoTime();
        IngestJob.Running job = IngestJob.start(spark, conf);
        job.query().processAllAvailable();
        long wall = System.nanoTime() - t0;
        long cpu = processCpu() - cpu0;
        long ioCpu = ioDispatcherCpu();
        // Steady state: the batches after the first (which loads classes and warms the JIT).
        long rows = 0;
        long ms = 0;
        StreamingQueryProgress[] progress = job.query().recentProgress();
        for (int i = 1; i < progress.length; i++) {
          rows += progress[i].numInputRows();
          ms += progress[i].durationMs().get("triggerExecution");
        }
        job.query().stop();
        job.sink().close();
        assertEquals(records, search.count("bench"));
        double secs = wall / 1e9;
        double taskCpuPerRecordMs = (taskCpuNanos.get() + ioCpu) / 1e6 / records;
        String out = String.format(
            "ingest benchmark: %d records of %d bytes, Kafka -> index, local[%d]%n"
                + "  wall clock         %.1f s, %.0f records/s (%.1f MB/s)%n"
                + "  after batch 0      %.0f records/s (%d records in %.1f s)%n"
                + "  job CPU            %.3f ms/record (Spark tasks %.3f + bulk I/O threads %.3f)"
                + " -> %.0f records/s per executor core%n"
                + "  whole JVM CPU      %.3f ms/record (Spark + Kafka broker + search node)%n",
            records, RECORD_BYTES, cores, secs, records / secs,
            records * (double) RECORD_BYTES / secs / 1e6, rows * 1000.0 / Math.max(ms, 1), rows,
            ms / 1e3, taskCpuPerRecordMs, taskCpuNanos.get() / 1e6 / records,
            ioCpu / 1e6 / records, 1000.0 / taskCpuPerRecordMs, cpu / 1e6 / records);
        System.out.print(out);
        Files.writeString(Path.of("target", "benchmark.txt"), out);
      } finally {
        spark.stop();
      }
    }
  }

  /**
   * CPU time of the Elasticsearch client's I/O threads (the low-level REST client names them
   * elasticsearch-rest-client-N-thread-M).
   */
  static long ioDispatcherCpu() {
    java.lang.management.ThreadMXBean t = ManagementFactory.getThreadMXBean();
    long sum = 0;
    for (java.lang.management.ThreadInfo i : t.getThreadInfo(t.getAllThreadIds())) {
      if (i != null && i.getThreadName().startsWith("elasticsearch-rest-client")) {
        sum += Math.max(0, t.getThreadCpuTime(i.getThreadId()));
      }
    }
    return sum;
  }

  static long processCpu() {
    return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
        .getProcessCpuTime();
  }
}
