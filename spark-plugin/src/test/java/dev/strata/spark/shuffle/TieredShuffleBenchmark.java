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

import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerTaskEnd;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The plugin's overhead: stock Spark and the plugin run the same jobs (an RDD sortByKey and a
 * Spark SQL groupBy, both checked) with spark.local.dir and the data dir on the same disk, so
 * that only the plugin's own work differs. Not a timed test: it asserts nothing about time and
 * runs only with {@code mvn test -Pbench} (make plugin-bench). It prints a summary and writes it
 * to target/benchmark.txt.
 *
 * <p>First each mode runs {@code bench.warmup} times unmeasured (JIT warm-up). Then the modes
 * alternate, each round in a fresh SparkSession: one unmeasured run, then {@code bench.runs}
 * measured runs. Per run it records the wall time and the CPU time of the run's tasks (Spark's
 * executorCpuTime plus deserialization CPU time: the work the plugin could add to, without
 * what other processes on a shared machine take away). Reported: the best and the median of
 * each; on a busy machine the best wall time and the task CPU time are the figures to trust.
 *
 * <p>Properties: bench.records (sorted records, default 2,000,000; the groupBy gets as many),
 * bench.warmup (default 2), bench.rounds (default 4), bench.runs (default 3), bench.dir
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
    int rounds = Integer.getInteger("bench.rounds", 4);
    int runs = Integer.getInteger("bench.runs", 3);
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
    for (int round = 0; round < rounds; round++) {
      // alternate which mode goes first, so that neither always runs on a warmer JVM
      boolean[] order = round % 2 == 0 ? new boolean[] {false, true} : new boolean[] {true, false};
      for (boolean plugin : order) {
        SparkSession spark = Jobs.start(local, List.of(data), plugin, 0, Map.of());
        TaskCpu taskCpu = new TaskCpu();
        spark.sparkContext().addSparkListener(taskCpu);
        try {
          for (int run = 0; run <= runs; run++) {
            long cpu0 = taskCpu.read(spark);
            long t0 = System.nanoTime();
            runJobs(spark, records, groups);
            long wall = System.nanoTime() - t0;
            long cpu = taskCpu.read(spark) - cpu0;
            if (run > 0) { // run 0 is not measured
              samples.get(plugin).add(new long[] {wall, cpu});
            }
            System.out.printf(Locale.ROOT,
                "round %d %-6s run %d: %6d ms wall, %6d ms task cpu%s%n",
                round, plugin ? "plugin" : "stock", run, wall / 1_000_000, cpu / 1_000_000,
                run == 0 ? " (not measured)" : "");
          }
        } finally {
          Jobs.stop(spark);
        }
      }
    }
    double load1 = ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage();

    Stats stock = new Stats(samples.get(false));
    Stats plugin = new Stats(samples.get(true));
    String report = String.format(Locale.ROOT,
        "Strata tiered shuffle benchmark: sortByKey of %,d records + groupBy of %,d rows into %,d"
            + " groups,%nlocal[2] on %d cores, spark.local.dir and the data dir on the same disk"
            + " (%s),%nload average %.1f at the start, %.1f at the end;"
            + " %d rounds x %d runs per mode (ms per run):%n"
            + "                 wall best  wall median  task-cpu best  task-cpu median%n"
            + "  stock Spark  %11.0f  %11.0f  %13.0f  %15.0f%n"
            + "  plugin       %11.0f  %11.0f  %13.0f  %15.0f%n"
            + "  overhead     %+10.1f%%  %+10.1f%%  %+12.1f%%  %+14.1f%%%n",
        records, records, groups, Runtime.getRuntime().availableProcessors(), base, load0, load1,
        rounds, runs,
        stock.wallBest, stock.wallMedian, stock.cpuBest, stock.cpuMedian,
        plugin.wallBest, plugin.wallMedian, plugin.cpuBest, plugin.cpuMedian,
        pct(plugin.wallBest, stock.wallBest), pct(plugin.wallMedian, stock.wallMedian),
        pct(plugin.cpuBest, stock.cpuBest), pct(plugin.cpuMedian, stock.cpuMedian));
    System.out.print(report);
    Files.writeString(Paths.get("target", "benchmark.txt"), report);
  }

  private static void runJobs(SparkSession spark, long records, long groups) {
    Jobs.sortJob(spark, records, 8, 8);
    Jobs.groupByJob(spark, records, groups, 8);
  }

  private static double pct(double value, double base) {
    return 100 * (value / base - 1);
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
