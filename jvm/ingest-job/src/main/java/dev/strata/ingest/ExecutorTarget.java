package dev.strata.ingest;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Set;

/**
 * What the driver asks of its scheduler backend to run a given number of executors, from the
 * executors it has: the pure half of {@link ExecutorScaler}, kept apart so a table test can hold
 * every case.
 *
 * <p>Why in place: the Spark operator (v2.5.2) deletes the driver and submits the application again
 * on any change of its spec, executors included, and the job reads nothing for a minute while it
 * starts (docs/ingest-job.md, "Executors changed in place"). Spark's driver can change its own
 * executor count while it runs: {@code SparkContext.requestTotalExecutors} sets the total the
 * cluster manager keeps (on Kubernetes, ExecutorPodsAllocator creates the pods that are missing and
 * deletes pending ones over the total), and {@code SparkContext.killExecutors} removes running
 * executors and lowers that total by as many (CoarseGrainedSchedulerBackend.killExecutors with
 * adjustTargetNumExecutors; Spark 4.0.2's sources). Lowering the total alone leaves running
 * executors running, so going down takes both: the kill, then the total pinned to the target.
 */
record ExecutorTarget(int requestTotal, List<String> kill) {

  /** Nothing to ask. */
  static final ExecutorTarget NONE = new ExecutorTarget(-1, List.of());

  /** Whether anything is to be asked. */
  boolean any() {
    return requestTotal >= 0 || !kill.isEmpty();
  }

  /**
   * Decides for a target of {@code target} executors (at least 1).
   *
   * @param live the executors registered and not asked to leave, oldest first
   * @param busy those of them running a task now
   * @param requested the total the backend was last asked for (spark.executor.instances at first)
   */
  static ExecutorTarget decide(int target, List<String> live, Set<String> busy, int requested) {
    if (target < 1) {
      throw new IllegalArgumentException("executor target " + target + " is not at least 1");
    }
    List<String> kill = new ArrayList<>();
    int surplus = live.size() - target;
    if (surplus > 0) {
      // The newest first, idle before busy: an idle executor leaves without a task to run again,
      // and the newest holds the least (its cached blocks, its shuffle files of older batches).
      pick(live, busy, false, surplus, kill);
      pick(live, busy, true, surplus, kill);
    }
    if (kill.isEmpty() && requested == target) {
      return NONE;
    }
    return new ExecutorTarget(target, List.copyOf(kill));
  }

  private static void pick(List<String> live, Collection<String> busy, boolean wantBusy, int n,
      List<String> into) {
    for (int i = live.size() - 1; i >= 0 && into.size() < n; i--) {
      String id = live.get(i);
      if (busy.contains(id) == wantBusy) {
        into.add(id);
      }
    }
  }

  /**
   * Parses a target as the operator writes it: a whole number of at least 1, or null with the
   * reason in {@code why} when it is not one.
   */
  static Integer parse(String value, StringBuilder why) {
    if (value == null) {
      why.append("no value");
      return null;
    }
    String v = value.trim();
    try {
      int n = Integer.parseInt(v);
      if (n >= 1) {
        return n;
      }
    } catch (NumberFormatException e) {
      // reported below
    }
    why.append('"').append(v).append("\" is not a whole number of at least 1");
    return null;
  }
}
