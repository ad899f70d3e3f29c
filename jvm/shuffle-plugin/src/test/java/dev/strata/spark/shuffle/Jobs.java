package dev.strata.spark.shuffle;

import static org.apache.spark.sql.functions.col;
import static org.apache.spark.sql.functions.count;
import static org.apache.spark.sql.functions.lit;
import static org.apache.spark.sql.functions.sum;
import static org.apache.spark.sql.functions.when;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;

import org.apache.spark.api.java.JavaPairRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerTaskEnd;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;

import scala.Tuple2;

/** Spark sessions for the tests and the benchmark, and the jobs they run, with their checks. */
final class Jobs {

  private Jobs() {}

  /**
   * A local[2] session with spark.local.dir = localDir and the data dirs set; with the plugin
   * when {@code plugin}. {@code memoryBytes} > 0 caps Spark's memory (so that sorts spill).
   */
  static SparkSession start(
      Path localDir, List<Path> dataDirs, boolean plugin, long memoryBytes,
      Map<String, String> extra) {
    SparkSession.Builder b = SparkSession.builder()
        .master("local[2]")
        .appName("strata-shuffle-test")
        .config("spark.ui.enabled", "false")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.local.dir", localDir.toString())
        .config("spark.sql.shuffle.partitions", "8")
        .config("spark.sql.adaptive.enabled", "false")
        .config(TieredShuffleConf.DATA_DIRS,
            dataDirs.stream().map(Path::toString).collect(Collectors.joining(",")));
    if (memoryBytes > 0) {
      b.config("spark.testing.memory", Long.toString(memoryBytes))
          .config("spark.testing.reservedMemory", "0");
    }
    if (plugin) {
      b.config("spark.shuffle.manager", TieredShuffleManager.class.getName());
    }
    for (Map.Entry<String, String> e : extra.entrySet()) {
      b.config(e.getKey(), e.getValue());
    }
    return b.getOrCreate();
  }

  static void stop(SparkSession spark) {
    if (spark != null) {
      spark.stop();
    }
    SparkSession.clearActiveSession();
    SparkSession.clearDefaultSession();
  }

  static Map<String, String> conf(String... kv) {
    Map<String, String> m = new LinkedHashMap<>();
    for (int i = 0; i < kv.length; i += 2) {
      m.put(kv[i], kv[i + 1]);
    }
    return m;
  }

  /** Counts bytes spilled to disk by tasks. */
  static final class SpillCounter extends SparkListener {
    final AtomicLong diskBytesSpilled = new AtomicLong();

    @Override
    public void onTaskEnd(SparkListenerTaskEnd end) {
      if (end.taskMetrics() != null) {
        diskBytesSpilled.addAndGet(end.taskMetrics().diskBytesSpilled());
      }
    }

    static SpillCounter register(SparkSession spark) {
      SpillCounter c = new SpillCounter();
      spark.sparkContext().addSparkListener(c);
      return c;
    }

    long total(SparkSession spark) {
      try {
        spark.sparkContext().listenerBus().waitUntilEmpty();
      } catch (java.util.concurrent.TimeoutException e) {
        throw new AssertionError("Spark's listener bus did not drain", e);
      }
      return diskBytesSpilled.get();
    }
  }

  /** A bijection of [0, 2^32): keys in shuffled order, each value once. */
  static long key(long i) {
    return (i * 0x9E3779B1L) & 0xFFFFFFFFL;
  }

  /**
   * Sorts n (key(i), i) pairs into {@code reducers} partitions with sortByKey (an RDD job) and
   * checks the result without collecting it: each partition is sorted, the partitions follow
   * each other, every record is there once with its own value. Returns the sorted RDD: while
   * it is reachable, Spark's ContextCleaner keeps its shuffle (and the shuffle's files).
   */
  static JavaPairRDD<Long, Long> sortJob(SparkSession spark, long n, int maps, int reducers) {
    JavaSparkContext jsc = JavaSparkContext.fromSparkContext(spark.sparkContext());
    List<Integer> slices = new ArrayList<>();
    for (int m = 0; m < maps; m++) {
      slices.add(m);
    }
    JavaPairRDD<Long, Long> pairs = jsc.parallelize(slices, maps).flatMapToPair(m -> {
      long from = n * m / maps;
      long to = n * (m + 1) / maps;
      return new Iterator<Tuple2<Long, Long>>() {
        long i = from;

        @Override
        public boolean hasNext() {
          return i < to;
        }

        @Override
        public Tuple2<Long, Long> next() {
          long v = i++;
          return new Tuple2<>(key(v), v);
        }
      };
    });
    JavaPairRDD<Long, Long> sorted = pairs.sortByKey(true, reducers);
    // per partition: index, count, first key, last key, sum of keys, records out of order or
    // with a value not their own
    List<long[]> parts = sorted.mapPartitionsWithIndex((idx, it) -> {
      long cnt = 0;
      long first = -1;
      long last = -1;
      long sumKeys = 0;
      long bad = 0;
      while (it.hasNext()) {
        Tuple2<Long, Long> t = it.next();
        long k = t._1();
        if (cnt == 0) {
          first = k;
        } else if (k <= last) {
          bad++;
        }
        if (key(t._2()) != k) {
          bad++;
        }
        last = k;
        sumKeys += k;
        cnt++;
      }
      List<long[]> out = new ArrayList<>();
      out.add(new long[] {idx, cnt, first, last, sumKeys, bad});
      return out.iterator();
    }, true).collect();
    long expectedSum = 0;
    for (long i = 0; i < n; i++) {
      expectedSum += key(i);
    }
    long total = 0;
    long sumKeys = 0;
    long prevLast = -1;
    List<long[]> ordered = new ArrayList<>(parts);
    ordered.sort((a, b) -> Long.compare(a[0], b[0]));
    for (long[] p : ordered) {
      assertEquals(0, p[5], "partition " + p[0] + ": records out of order or mismatched");
      if (p[1] > 0) {
        assertTrue(p[2] > prevLast, "partition " + p[0] + " starts before its predecessor ends");
        prevLast = p[3];
      }
      total += p[1];
      sumKeys += p[4];
    }
    assertEquals(n, total, "record count after the sort");
    assertEquals(expectedSum, sumKeys, "sum of keys after the sort");
    return sorted;
  }

  /** The id of the shuffle that produced rdd. */
  static int shuffleId(JavaPairRDD<?, ?> rdd) {
    return ((org.apache.spark.ShuffleDependency<?, ?, ?>) rdd.rdd().dependencies().head())
        .shuffleId();
  }

  /**
   * Groups ids 0..n-1 by id % groups with Spark SQL (count and sum per group) and checks every
   * group in one more aggregation. n must be a multiple of groups. Returns the query: while it
   * is reachable, Spark's ContextCleaner keeps its shuffles.
   */
  static Dataset<Row> groupByJob(SparkSession spark, long n, long groups, int maps) {
    long per = n / groups;
    Dataset<Row> agg = spark.range(0, n, 1, maps)
        .groupBy(col("id").mod(groups).as("k"))
        .agg(count(lit(1)).as("n"), sum("id").as("s"));
    // group k holds k, k + groups, ..., k + (per-1)*groups
    long offset = groups * per * (per - 1) / 2;
    Dataset<Row> query = agg.select(
        count(lit(1)).as("groups"),
        sum(when(col("n").notEqual(lit(per))
            .or(col("s").notEqual(col("k").multiply(per).plus(lit(offset)))), 1)
            .otherwise(0)).as("bad"));
    Row check = query.first();
    assertEquals(groups, check.getLong(0), "group count");
    assertEquals(0L, check.getLong(1), "groups with a wrong count or sum");
    return query;
  }

  /**
   * groupByKey on an RDD with few reducers and no map-side combine: Spark's bypass-merge
   * writer (one temp file per reducer, concatenated).
   */
  static void groupByKeyJob(SparkSession spark, long n, int groups, int maps, int reducers) {
    JavaSparkContext jsc = JavaSparkContext.fromSparkContext(spark.sparkContext());
    List<Long> ids = new ArrayList<>();
    for (long i = 0; i < n; i++) {
      ids.add(i);
    }
    List<Tuple2<Long, long[]>> out = jsc.parallelize(ids, maps)
        .mapToPair(i -> new Tuple2<>(i % groups, i))
        .groupByKey(reducers)
        .mapValues(vs -> {
          long c = 0;
          long s = 0;
          for (long v : vs) {
            c++;
            s += v;
          }
          return new long[] {c, s};
        })
        .collect();
    assertEquals(groups, out.size(), "groups");
    long per = n / groups;
    for (Tuple2<Long, long[]> t : out) {
      assertEquals(per, t._2()[0], "count of group " + t._1());
      assertEquals(t._1() * per + groups * per * (per - 1) / 2, t._2()[1], "sum of group " + t._1());
    }
  }
}
