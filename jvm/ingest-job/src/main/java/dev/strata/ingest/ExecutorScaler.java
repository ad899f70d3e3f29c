package dev.strata.ingest;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.apache.spark.SparkContext;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerExecutorAdded;
import org.apache.spark.scheduler.SparkListenerExecutorRemoved;
import org.apache.spark.scheduler.SparkListenerTaskEnd;
import org.apache.spark.scheduler.SparkListenerTaskStart;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import scala.jdk.javaapi.CollectionConverters;

/**
 * Keeps the driver's executor count at the target the operator publishes, while the query runs:
 * it reads the target every period and asks Spark's scheduler backend for it
 * ({@link ExecutorTarget} says what to ask). The job is not resubmitted, so it keeps reading
 * through the change; see docs/ingest-job.md, "Executors changed in place".
 *
 * <p>It knows the executors from Spark's listener bus (added, removed, the tasks each runs), seeded
 * with those already registered when it starts. A target that is missing leaves the count at
 * spark.executor.instances; one that cannot be read or is not a whole number ≥ 1 is logged once
 * (until it changes) and changes nothing.
 */
final class ExecutorScaler extends SparkListener implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(ExecutorScaler.class);

  /** Where the target comes from: its raw value, or null when none is published. */
  interface Source {
    String read() throws Exception;

    /** What it reads, for the log. */
    String describe();
  }

  private final SparkContext sc;
  private final Source source;
  /** Registered executors, oldest first, with the tasks each runs now. */
  private final LinkedHashMap<String, Integer> executors = new LinkedHashMap<>();
  /** Executors asked to leave that have not yet gone. */
  private final Set<String> leaving = new HashSet<>();
  private final ScheduledExecutorService timer;
  private final java.util.concurrent.atomic.AtomicLong polls = new java.util.concurrent.atomic.AtomicLong();
  private int requested;
  private String reported;

  private ExecutorScaler(SparkContext sc, Source source) {
    this.sc = sc;
    this.source = source;
    // Spark's own default on Kubernetes when the key is absent
    // (SchedulerBackendUtils.DEFAULT_NUMBER_EXECUTORS).
    this.requested = sc.getConf().getInt("spark.executor.instances", 2);
    this.timer = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "strata-executor-scaler");
      t.setDaemon(true);
      return t;
    });
  }

  /** Starts following source every periodMillis on sc. */
  static ExecutorScaler start(SparkContext sc, Source source, long periodMillis) {
    ExecutorScaler s = new ExecutorScaler(sc, source);
    sc.addSparkListener(s);
    // Executors that registered before the listener did. getExecutorIds is private[spark] in
    // Scala, public to Java; the listener bus gives no list of its own.
    synchronized (s) {
      for (String id : CollectionConverters.asJava(sc.getExecutorIds())) {
        s.executors.putIfAbsent(id, 0);
      }
    }
    LOG.info("following the executor target in {} every {} ms", source.describe(), periodMillis);
    s.timer.scheduleWithFixedDelay(s::pollQuietly, 0, periodMillis, TimeUnit.MILLISECONDS);
    return s;
  }

  /** The executors registered and not asked to leave, oldest first. */
  synchronized List<String> live() {
    List<String> out = new ArrayList<>();
    for (String id : executors.keySet()) {
      if (!leaving.contains(id)) {
        out.add(id);
      }
    }
    return out;
  }

  /** How many times the target has been read and acted on (for tests that wait on a poll). */
  long polls() {
    return polls.get();
  }

  private void pollQuietly() {
    try {
      poll();
    } catch (RuntimeException e) {
      // A failed request (the backend stopping with the context, a refused kill) must not end
      // the timer: the next period tries again.
      report("asking Spark for the executor target failed: " + e);
    } finally {
      polls.incrementAndGet();
    }
  }

  /** Reads the target once and asks for it. */
  void poll() {
    String raw;
    try {
      raw = source.read();
    } catch (Exception e) {
      report("cannot read the executor target in " + source.describe() + ": " + e);
      return;
    }
    if (raw == null) {
      return; // none published: spark.executor.instances holds
    }
    StringBuilder why = new StringBuilder();
    Integer target = ExecutorTarget.parse(raw, why);
    if (target == null) {
      report("the executor target in " + source.describe() + " is refused: " + why);
      return;
    }
    reported = null; // a target read: the next problem is news again
    ExecutorTarget ask;
    synchronized (this) {
      List<String> live = live();
      Set<String> busy = new HashSet<>();
      for (Map.Entry<String, Integer> e : executors.entrySet()) {
        if (e.getValue() > 0) {
          busy.add(e.getKey());
        }
      }
      ask = ExecutorTarget.decide(target, live, busy, requested);
      if (!ask.any()) {
        return;
      }
      leaving.addAll(ask.kill());
      LOG.info("executor target {} (was {}; {} running){}", target, requested, live.size(),
          ask.kill().isEmpty() ? "" : ": removing " + ask.kill());
      requested = ask.requestTotal();
    }
    if (!ask.kill().isEmpty()
        // Lowers the backend's total by as many; the request below pins it to the target.
        && !sc.killExecutors(CollectionConverters.asScala(ask.kill()).toList())) {
      // None was killed (gone meanwhile, or refused): counted again at the next read.
      synchronized (this) {
        ask.kill().forEach(leaving::remove);
      }
    }
    sc.requestTotalExecutors(ask.requestTotal(), 0, scala.collection.immutable.Map$.MODULE$.empty());
  }

  private void report(String problem) {
    if (!problem.equals(reported)) {
      LOG.warn("{}; the executors stay as they are", problem);
      reported = problem;
    }
  }

  @Override
  public synchronized void onExecutorAdded(SparkListenerExecutorAdded e) {
    executors.putIfAbsent(e.executorId(), 0);
  }

  @Override
  public synchronized void onExecutorRemoved(SparkListenerExecutorRemoved e) {
    executors.remove(e.executorId());
    leaving.remove(e.executorId());
  }

  @Override
  public synchronized void onTaskStart(SparkListenerTaskStart e) {
    executors.computeIfPresent(e.taskInfo().executorId(), (id, n) -> n + 1);
  }

  @Override
  public synchronized void onTaskEnd(SparkListenerTaskEnd e) {
    executors.computeIfPresent(e.taskInfo().executorId(), (id, n) -> Math.max(n - 1, 0));
  }

  @Override
  public void close() {
    timer.shutdownNow();
    sc.removeSparkListener(this);
  }
}
