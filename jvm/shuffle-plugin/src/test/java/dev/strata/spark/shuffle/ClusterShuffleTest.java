package dev.strata.spark.shuffle;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import org.apache.spark.TaskFailedReason;
import org.apache.spark.api.java.JavaPairRDD;
import org.apache.spark.executor.ShuffleReadMetrics;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerStageCompleted;
import org.apache.spark.scheduler.SparkListenerTaskEnd;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.Test;

/**
 * The plugin on a cluster of executors: Spark's {@code local-cluster} master runs a standalone
 * master and two workers in the test JVM, and each worker starts its executor as a JVM of its
 * own, as a cluster does. Local mode has one executor, which reads only the blocks it wrote;
 * here a reducer reads the other executor's map outputs, either from that executor's files on
 * the same host (Spark's host-local disk reads, {@code spark.shuffle.readHostLocalDisk}, on by
 * default: the reader builds the paths from the writer's local dir names, which the plugin's
 * layout follows) or fetched over the network from the other executor's block manager, which
 * serves them through the plugin's resolver. Either path wrong fails a fetch, which Spark answers
 * by running the map stage again: the test asserts the results, that no fetch failed and that
 * every stage ran once, and where the blocks were read from.
 */
class ClusterShuffleTest extends SparkDirs {

  static final long RECORDS = 200_000;

  private SparkSession start(boolean hostLocal) {
    spark = SparkSession.builder()
        .master("local-cluster[2,1,1024]")
        .appName("strata-shuffle-cluster-test")
        .config("spark.ui.enabled", "false")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.executor.memory", "512m")
        .config("spark.executor.extraJavaOptions", moduleOptions())
        // The executors' JVMs get the test's class path (Spark, the plugin, the test's jobs).
        // A worker builds their command with Spark's launcher, which looks for a Spark
        // distribution's jars/ and, without SPARK_SCALA_VERSION, a source tree's build
        // directories: neither is here, and SPARK_TESTING makes both optional.
        .config("spark.executor.extraClassPath", System.getProperty("java.class.path"))
        .config("spark.executorEnv.SPARK_SCALA_VERSION", "2.13")
        .config("spark.executorEnv.SPARK_TESTING", "1")
        .config("spark.local.dir", local.toString())
        .config("spark.shuffle.readHostLocalDisk", Boolean.toString(hostLocal))
        .config("spark.shuffle.manager", TieredShuffleManager.class.getName())
        .config(TieredShuffleConf.DATA_DIRS, data1 + "," + data2)
        .getOrCreate();
    return spark;
  }

  @Test
  void aReducerReadsTheOtherExecutorsFilesOnItsHost() throws Exception {
    Reads reads = run(true);
    assertTrue(reads.local.get() > 0, "blocks read from disk (the executor's own or its host's): " + reads);
    assertEquals(0, reads.remote.get(), "blocks fetched over the network: " + reads);
  }

  @Test
  void aReducerFetchesTheOtherExecutorsBlocksOverTheNetwork() throws Exception {
    Reads reads = run(false);
    assertTrue(reads.remote.get() > 0, "blocks fetched over the network: " + reads);
  }

  /** Runs the sort on the cluster and checks it; returns where the reducers read from. */
  private Reads run(boolean hostLocal) throws Exception {
    start(hostLocal);
    waitForExecutors(2);
    Reads reads = new Reads();
    spark.sparkContext().addSparkListener(reads);
    JavaPairRDD<Long, Long> sorted = Jobs.sortJob(spark, RECORDS, 4, 4);
    spark.sparkContext().listenerBus().waitUntilEmpty();
    assertEquals(0, reads.failed.get(), "tasks failed: " + reads.failures);
    assertEquals(0, reads.retried.get(), "stages run again");
    // Map outputs on both executors: every reducer read blocks of the other executor.
    assertEquals(2, reads.writers.size(), "executors that wrote map outputs: " + reads.writers);
    // Each executor wrote its final files under a root of its own in the data dirs, none in
    // spark.local.dir.
    assertEquals(2, roots(data1).size(), "executors' roots in data1: " + roots(data1));
    assertEquals(roots(data1), roots(data2), "the same executors' roots in data1 and data2");
    assertEquals(0, files(local, ".data"), "shuffle .data files in spark.local.dir");
    assertTrue(files(data1, ".data") + files(data2, ".data") > 0, "shuffle .data files in the data dirs");
    assertEquals(RECORDS, sorted.count(), "records in the sorted RDD, read again");
    // Stopped, each executor deletes its roots as it stops (its JVM exits after).
    Jobs.stop(spark);
    spark = null;
    waitUntil(() -> roots(data1).isEmpty() && roots(data2).isEmpty(),
        "the executors' roots deleted when the application stopped");
    return reads;
  }

  /**
   * The test JVM's module options (the parent POM's spark.test.jvm.options, which Spark's
   * launcher would add on Java 17), for the executors' JVMs, which no launcher starts here.
   */
  private static String moduleOptions() {
    return ManagementFactory.getRuntimeMXBean().getInputArguments().stream()
        .filter(a -> a.startsWith("--add-") || a.startsWith("-XX:+IgnoreUnrecognized")
            || a.startsWith("-Djdk.reflect") || a.startsWith("-Dio.netty"))
        .collect(Collectors.joining(" "));
  }

  private void waitForExecutors(int n) throws Exception {
    // getExecutorMemoryStatus lists the driver's block manager too.
    waitUntil(() -> spark.sparkContext().getExecutorMemoryStatus().size() >= n + 1,
        "the cluster's " + n + " executors registered");
  }

  interface Condition {
    boolean holds() throws Exception;
  }

  /** Waits for a state, up to two minutes: executors are JVMs that start and stop. */
  private static void waitUntil(Condition c, String what) throws Exception {
    long deadline = System.nanoTime() + 120_000_000_000L;
    while (!c.holds()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("not within two minutes: " + what);
      }
      Thread.sleep(200);
    }
  }

  private static Set<String> roots(Path dataDir) throws IOException {
    try (Stream<Path> s = Files.list(dataDir)) {
      return s.map(p -> p.getFileName().toString()).collect(Collectors.toCollection(TreeSet::new));
    }
  }

  private static long files(Path dir, String suffix) throws IOException {
    try (Stream<Path> s = Files.walk(dir)) {
      return s.filter(p -> p.getFileName().toString().endsWith(suffix)).count();
    }
  }

  /** Counts where the reducers read their blocks from, failed tasks and stages run again. */
  static final class Reads extends SparkListener {
    final AtomicLong local = new AtomicLong();
    final AtomicLong remote = new AtomicLong();
    final AtomicLong failed = new AtomicLong();
    final AtomicLong retried = new AtomicLong();
    final Set<String> failures = ConcurrentHashMap.newKeySet();
    final Set<String> writers = ConcurrentHashMap.newKeySet();

    @Override
    public void onTaskEnd(SparkListenerTaskEnd end) {
      if (end.reason() instanceof TaskFailedReason r) {
        failed.incrementAndGet();
        failures.add(r.toErrorString());
      }
      if (end.taskMetrics() != null) {
        if (end.taskMetrics().shuffleWriteMetrics().recordsWritten() > 0) {
          writers.add(end.taskInfo().executorId());
        }
        ShuffleReadMetrics m = end.taskMetrics().shuffleReadMetrics();
        local.addAndGet(m.localBlocksFetched());
        remote.addAndGet(m.remoteBlocksFetched());
      }
    }

    @Override
    public void onStageCompleted(SparkListenerStageCompleted done) {
      if (done.stageInfo().attemptNumber() > 0) {
        retried.incrementAndGet();
      }
    }

    @Override
    public String toString() {
      return "local " + local + ", remote " + remote;
    }
  }
}
