package dev.strata.ingest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashSet;
import java.util.Set;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import org.apache.spark.SparkConf;
import org.apache.spark.SparkContext;
import org.junit.jupiter.api.Test;

/**
 * The executor target followed on a real Spark cluster: Spark's local-cluster mode (a standalone
 * master and two workers in this JVM, each executor a JVM of its own started from
 * $SPARK_HOME/jars, as internal/lab runs the job). Its backend is the standalone one, not
 * Kubernetes's; both are CoarseGrainedSchedulerBackends, whose requestTotalExecutors and
 * killExecutors the scaler calls (the Kubernetes side is cited in ExecutorTarget).
 */
class ExecutorScalerTest {
  /** Long enough for an executor JVM to start on a loaded machine; a bound, not a measure. */
  static final Duration WAIT = Duration.ofMinutes(4);

  @Test
  void followsTheTargetDownAndUpWithoutRestarting() throws Exception {
    layOutSparkHome();
    SparkConf conf = new SparkConf()
        .setMaster("local-cluster[2,1,640]")
        .setAppName("executor-scaler-test")
        .set("spark.executor.instances", "2")
        .set("spark.executor.memory", "512m")
        .set("spark.ui.enabled", "false");
    SparkContext sc = new SparkContext(conf);
    AtomicReference<String> target = new AtomicReference<>();
    try (ExecutorScaler scaler = ExecutorScaler.start(sc, source(target), 200)) {
      waitFor("two executors at start", () -> executorCount(sc) == 2);
      Set<String> before = new LinkedHashSet<>(scaler.live());
      assertEquals(2, before.size(), "the scaler's view at start: " + before);

      Instant down = Instant.now();
      target.set("1");
      waitFor("one executor after the target 1", () -> executorCount(sc) == 1 && scaler.live().size() == 1);
      System.out.println("ExecutorScalerTest: 2 -> 1 executors in " + Duration.between(down, Instant.now()));
      String kept = scaler.live().get(0);
      assertTrue(before.contains(kept), "the executor kept is one of the first two: " + kept);

      // A target that is not one is refused (logged) and changes nothing, however often read.
      target.set("not a number");
      long polled = scaler.polls();
      waitFor("two reads of the refused target", () -> scaler.polls() >= polled + 2);
      assertEquals(1, executorCount(sc), "executors after a refused target");

      Instant up = Instant.now();
      target.set("2");
      waitFor("two executors after the target 2", () -> executorCount(sc) == 2 && scaler.live().size() == 2);
      System.out.println("ExecutorScalerTest: 1 -> 2 executors in " + Duration.between(up, Instant.now()));
      assertTrue(scaler.live().contains(kept), "the executor kept still runs: " + scaler.live());

      // Work still runs on the executors the scaler keeps: the same context, never restarted.
      long n = sc.parallelize(scala.jdk.javaapi.CollectionConverters.asScala(
          java.util.List.of(1, 2, 3, 4)).toSeq(), 4, scala.reflect.ClassTag$.MODULE$.apply(Integer.class)).count();
      assertEquals(4, n);
    } finally {
      sc.stop();
    }
  }

  /** The executors the driver's status tracker knows, the driver left out. */
  static int executorCount(SparkContext sc) {
    return sc.statusTracker().getExecutorInfos().length - 1;
  }

  static ExecutorScaler.Source source(AtomicReference<String> target) {
    return new ExecutorScaler.Source() {
      @Override
      public String read() {
        return target.get();
      }

      @Override
      public String describe() {
        return "the test's target";
      }
    };
  }

  static void waitFor(String what, BooleanSupplier done) throws InterruptedException {
    Instant deadline = Instant.now().plus(WAIT);
    while (!done.getAsBoolean()) {
      if (Instant.now().isAfter(deadline)) {
        throw new AssertionError(what + ": not within " + WAIT);
      }
      Thread.sleep(100);
    }
  }

  /**
   * $SPARK_HOME as the image has it for the standalone workers (the surefire configuration names
   * it): jars/ linking the jars pom.xml lists for the lab's SPARK_HOME, and the RELEASE file.
   */
  static void layOutSparkHome() throws IOException {
    Path home = Paths.get(System.getenv("SPARK_HOME"));
    Path jars = home.resolve("jars");
    Files.createDirectories(jars);
    Path target = home.getParent();
    for (String scope : new String[] {"compile", "runtime"}) {
      String list = Files.readString(target.resolve("spark-classpath-" + scope + ".txt")).trim();
      for (String jar : list.split(java.io.File.pathSeparator)) {
        Path link = jars.resolve(Paths.get(jar).getFileName());
        if (!Files.exists(link, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
          Files.createSymbolicLink(link, Paths.get(jar));
        }
      }
    }
    Files.writeString(home.resolve("RELEASE"), "Spark 4.0.2 (the tests', from Maven Central)\n");
  }
}
