package dev.strata.spark.shuffle;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.spark.SparkEnv;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.shuffle.IndexShuffleBlockResolver;
import org.apache.spark.scheduler.SparkListenerTaskEnd;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import scala.Option;

/**
 * The plugin's overhead: stock Spark and the plugin run the same jobs (an RDD sortByKey and a
 * Spark SQL groupBy, both checked) with spark.local.dir and the data dir on the same disk, so
 * that only the plugin's own work differs. Not a timed test: it asserts nothing about time and
 * runs only with {@code mvn test -Pbench} (make plugin-bench). It prints a summary and writes it
 * to target/benchmark.txt.
 *
 * <p>First each mode runs {@code bench.warmup} times unmeasured (JIT warm-up). Then, in each of
 * {@code bench.rounds} rounds, the two modes run back to back (which goes first alternates),
 * each in a fresh SparkSession: one unmeasured run, then {@code bench.runs} measured runs. Per
 * run it records the wall time and the CPU time of the run's tasks (Spark's executorCpuTime plus
 * deserialization CPU time: the work the plugin could add to, without what other processes take
 * away). The overhead is the median over the rounds of plugin/stock within a round, the pairing
 * that is least disturbed by other load on the machine; the range of the rounds' ratios shows
 * how noisy the machine was. The best and median per mode are printed too.
 *
 * <p>Properties: bench.records (sorted records, default 2,000,000; the groupBy gets as many),
 * bench.warmup (default 2), bench.rounds (default 8), bench.runs (default 2), bench.dir
 * (default target/bench).
 */
@Tag("benchmark")
class TieredShuffleBenchmark {

  /** CPU time of tasks, in nanoseconds. */
  static final class TaskCpu extends SparkListener {
    final AtomicLong nanos = new AtomicLong();

    @Override
    public void onTaskEnd(SparkListenerTaskEnd end) {
      if (end.taskMetrics() != null) {
        nanos.addAndGet(end.taskMetrics().executorCpuTime()
            + end.taskMetrics().executorDeserializeCpuTime());
      }
    }

    long read(SparkSession spark) throws Exception {
      spark.sparkContext().listenerBus().waitUntilEmpty();
      return nanos.get();
    }
  }

  @Test
  void stockSparkAgainstThePlugin() throws Exception {
    long records = Long.getLong("bench.records", 2_000_000L);
    int warmup = Integer.getInteger("bench.warmup", 2);
    int rounds = Integer.getInteger("bench.rounds", 8);
    int runs = Integer.getInteger("bench.runs", 2);
    Path base = Paths.get(System.getProperty("bench.dir", "target/bench")).toAbsolutePath();
    Path local = Files.createDirectories(base.resolve("local"));
    Path data = Files.createDirectories(base.resolve("data"));
    long groups = records / 4;
    double load0 = ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage();

    for (boolean plugin : new boolean[] {false, true}) {
      SparkSession spark = Jobs.start(local, List.of(data), plugin, 0, Map.of());
      try {
        for (int run = 0; run < warmup; run++) {
          long t0 = System.nanoTime();
          runJobs(spark, records, groups);
          System.out.printf(Locale.ROOT, "warm-up %-6s run %d: %6d ms wall%n",
              plugin ? "plugin" : "stock", run, (System.nanoTime() - t0) / 1_000_000);
        }
      } finally {
        Jobs.stop(spark);
      }
    }

    Map<Boolean, List<long[]>> samples = Map.of(false, new ArrayList<>(), true, new ArrayList<>());
    List<Double> wallRatios = new ArrayList<>();
    List<Double> cpuRatios = new ArrayList<>();
    for (int round = 0; round < rounds; round++) {
      // alternate which mode goes first, so that neither always runs on a warmer JVM
      boolean[] order = round % 2 == 0 ? new boolean[] {false, true} : new boolean[] {true, false};
      Map<Boolean, long[]> roundSum = new java.util.HashMap<>();
      for (boolean plugin : order) {
        SparkSession spark = Jobs.start(local, List.of(data), plugin, 0, Map.of());
        TaskCpu taskCpu = new TaskCpu();
        spark.sparkContext().addSparkListener(taskCpu);
        long[] sum = new long[2];
        try {
          for (int run = 0; run <= runs; run++) {
            long cpu0 = taskCpu.read(spark);
            long t0 = System.nanoTime();
            runJobs(spark, records, groups);
            long wall = System.nanoTime() - t0;
            long cpu = taskCpu.read(spark) - cpu0;
            if (run > 0) { // run 0 is not measured
              samples.get(plugin).add(new long[] {wall, cpu});
              sum[0] += wall;
              sum[1] += cpu;
            }
            System.out.printf(Locale.ROOT,
                "round %d %-6s run %d: %6d ms wall, %6d ms task cpu%s%n",
                round, plugin ? "plugin" : "stock", run, wall / 1_000_000, cpu / 1_000_000,
                run == 0 ? " (not measured)" : "");
          }
        } finally {
          Jobs.stop(spark);
        }
        roundSum.put(plugin, sum);
      }
      // the two modes of a round ran back to back: their ratio is the least disturbed by
      // what else the machine does
      wallRatios.add((double) roundSum.get(true)[0] / roundSum.get(false)[0]);
      cpuRatios.add((double) roundSum.get(true)[1] / roundSum.get(false)[1]);
    }
    double load1 = ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage();

    Stats stock = new Stats(samples.get(false));
    Stats plugin = new Stats(samples.get(true));
    Collections.sort(wallRatios);
    Collections.sort(cpuRatios);
    String report = String.format(Locale.ROOT,
        "Strata tiered shuffle benchmark: sortByKey of %,d records + groupBy of %,d rows into %,d"
            + " groups,%nlocal[2] on %d cores, spark.local.dir and the data dir on the same disk"
            + " (%s),%nload average %.1f at the start, %.1f at the end;"
            + " %d rounds x %d runs per mode (ms per run):%n"
            + "                 wall best  wall median  task-cpu best  task-cpu median%n"
            + "  stock Spark  %11.0f  %11.0f  %13.0f  %15.0f%n"
            + "  plugin       %11.0f  %11.0f  %13.0f  %15.0f%n"
            + "overhead, median of the rounds' plugin/stock ratios: %+.1f %% wall"
            + " (rounds %+.1f .. %+.1f %%), %+.1f %% task cpu (rounds %+.1f .. %+.1f %%)%n",
        records, records, groups, Runtime.getRuntime().availableProcessors(), base, load0, load1,
        rounds, runs,
        stock.wallBest, stock.wallMedian, stock.cpuBest, stock.cpuMedian,
        plugin.wallBest, plugin.wallMedian, plugin.cpuBest, plugin.cpuMedian,
        pct(medianOf(wallRatios)), pct(wallRatios.get(0)), pct(wallRatios.get(rounds - 1)),
        pct(medianOf(cpuRatios)), pct(cpuRatios.get(0)), pct(cpuRatios.get(rounds - 1)));
    report += resolverCost(local, data);
    System.out.print(report);
    Files.writeString(Paths.get("target", "benchmark.txt"), report);
  }

  /**
   * The plugin's only extra work on the write and read paths: naming a file. Times Spark's
   * resolver and the plugin's resolving the same data, index and checksum file names, in the
   * same executor.
   */
  private static String resolverCost(Path local, Path data) {
    SparkSession spark = Jobs.start(local, List.of(data), true, 0, Map.of());
    try {
      SparkEnv env = SparkEnv.get();
      IndexShuffleBlockResolver stock = new IndexShuffleBlockResolver(env.conf(), env.blockManager());
      IndexShuffleBlockResolver tiered = (IndexShuffleBlockResolver) env.shuffleManager()
          .shuffleBlockResolver();
      int calls = 300_000;
      double stockNs = Double.MAX_VALUE;
      double tieredNs = Double.MAX_VALUE;
      for (int rep = 0; rep < 5; rep++) {
        stockNs = Math.min(stockNs, nanosPerName(stock, calls));
        tieredNs = Math.min(tieredNs, nanosPerName(tiered, calls));
      }
      return String.format(Locale.ROOT,
          "naming a shuffle file (data, index or checksum): Spark's resolver %.0f ns, the"
              + " plugin's %.0f ns (best of 5 x %,d names)%n",
          stockNs, tieredNs, 3 * calls);
    } finally {
      Jobs.stop(spark);
    }
  }

  private static double nanosPerName(IndexShuffleBlockResolver r, int calls) {
    long sink = 0;
    long t0 = System.nanoTime();
    for (int i = 0; i < calls; i++) {
      int shuffle = i % 7;
      long map = i % 1000;
      sink += r.getDataFile(shuffle, map).getPath().length();
      sink += r.getIndexFile(shuffle, map, Option.empty()).getPath().length();
      sink += r.getChecksumFile(shuffle, map, "ADLER32", Option.empty()).getPath().length();
    }
    long t = System.nanoTime() - t0;
    if (sink == 42) {
      System.out.println(sink);
    }
    return (double) t / (3L * calls);
  }

  private static void runJobs(SparkSession spark, long records, long groups) {
    Jobs.sortJob(spark, records, 8, 8);
    Jobs.groupByJob(spark, records, groups, 8);
  }

  private static double pct(double ratio) {
    return 100 * (ratio - 1);
  }

  private static double medianOf(List<Double> sorted) {
    int n = sorted.size();
    return n % 2 == 1 ? sorted.get(n / 2) : (sorted.get(n / 2 - 1) + sorted.get(n / 2)) / 2;
  }

  /** Best and median of the samples, in milliseconds. */
  private static final class Stats {
    final double wallBest;
    final double wallMedian;
    final double cpuBest;
    final double cpuMedian;

    Stats(List<long[]> samples) {
      List<Long> wall = new ArrayList<>();
      List<Long> cpu = new ArrayList<>();
      for (long[] s : samples) {
        wall.add(s[0]);
        cpu.add(s[1]);
      }
      Collections.sort(wall);
      Collections.sort(cpu);
      wallBest = wall.get(0) / 1e6;
      wallMedian = median(wall) / 1e6;
      cpuBest = cpu.get(0) / 1e6;
      cpuMedian = median(cpu) / 1e6;
    }

    private static double median(List<Long> v) {
      int n = v.size();
      return n % 2 == 1 ? v.get(n / 2) : (v.get(n / 2 - 1) + v.get(n / 2)) / 2.0;
    }
  }
}
