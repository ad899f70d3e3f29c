package dev.strata.spark.shuffle;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Spark metrics Strata's alerts, dashboards and autoscaler read, from real Spark: a local
 * session started with exactly the metrics keys the operator puts in the SparkApplication (read
 * from the builder's golden file), a shuffle job that spills, and the driver's endpoints the
 * example PodMonitor scrapes. It checks that every Spark series docs/metrics.md lists is served
 * with the labels the queries join on, and that Spark's executor endpoint has no spill counter
 * (which is why the spill signal is estimated from disk writes).
 */
class SparkMetricsTest {

  static final Path ROOT = Paths.get("").toAbsolutePath().getParent().getParent();
  static final Path GOLDEN = ROOT.resolve(
      "internal/desired/testdata/strata-job.sparkapplication-sensors.golden.yaml");
  static final String APP = "sensors";

  @TempDir Path base;
  SparkSession spark;

  @AfterEach
  void stop() {
    Jobs.stop(spark);
    spark = null;
  }

  /** The sparkConf keys of the operator's SparkApplication that configure metrics. */
  static Map<String, String> strataMetricsConf() throws IOException {
    Pattern line = Pattern.compile(
        "^    (spark\\.(?:ui\\.prometheus\\.|metrics\\.)[^:]*): \"?([^\"]*)\"?$");
    Map<String, String> conf = new LinkedHashMap<>();
    for (String l : Files.readAllLines(GOLDEN)) {
      Matcher m = line.matcher(l);
      if (m.matches()) {
        conf.put(m.group(1), m.group(2));
      }
    }
    return conf;
  }

  /** The Spark series docs/metrics.md lists (its table rows whose source is Spark). */
  static List<String> documentedSparkSeries() throws IOException {
    Pattern row = Pattern.compile("^\\| `([a-zA-Z_:]+)` \\| Spark \\|.*");
    List<String> names = new ArrayList<>();
    for (String l : Files.readAllLines(ROOT.resolve("docs/metrics.md"))) {
      Matcher m = row.matcher(l);
      if (m.matches()) {
        names.add(m.group(1));
      }
    }
    return names;
  }

  static String get(String url) throws Exception {
    // Spark's UI answers /metrics/prometheus with a redirect to /metrics/prometheus/, which
    // Prometheus follows (follow_redirects defaults to true).
    HttpResponse<String> r = HttpClient.newBuilder()
        .followRedirects(HttpClient.Redirect.NORMAL).build().send(
        HttpRequest.newBuilder(URI.create(url)).GET().build(),
        HttpResponse.BodyHandlers.ofString());
    assertEquals(200, r.statusCode(), url + " answered " + r.statusCode() + ": " + r.body());
    return r.body();
  }

  @Test
  void theDriverServesTheSeriesTheQueriesRead() throws Exception {
    Map<String, String> conf = strataMetricsConf();
    assertEquals("true", conf.get("spark.ui.prometheus.enabled"), "the operator's conf " + conf);
    assertEquals("org.apache.spark.metrics.sink.PrometheusServlet",
        conf.get("spark.metrics.conf.*.sink.prometheusServlet.class"), "the operator's conf " + conf);
    Map<String, String> extra = new LinkedHashMap<>(conf);
    extra.putAll(TieredShuffleTest.SPILLING);
    extra.put("spark.ui.enabled", "true");
    extra.put("spark.ui.port", "0");
    extra.put("spark.app.name", APP); // the Spark operator submits with --name <SparkApplication>
    Path local = Files.createDirectories(base.resolve("local"));
    Path data = Files.createDirectories(base.resolve("data"));
    spark = Jobs.start(local, List.of(data), true, TieredShuffleTest.SMALL_MEMORY, extra);
    Jobs.SpillCounter spills = Jobs.SpillCounter.register(spark);
    Jobs.sortJob(spark, TieredShuffleTest.SORT_RECORDS, 4, 4);
    assertTrue(spills.total(spark) > 0, "the job was meant to spill");
    String ui = spark.sparkContext().uiWebUrl().get();

    // The executor summary reaches the status store with the listener bus; wait for it.
    Pattern shuffleWrite = Pattern.compile(
        "(?m)^metrics_executor_totalShuffleWrite_bytes_total\\{(.*)\\} ([0-9.E]+)$");
    String executors = "";
    double written = 0;
    long deadline = System.nanoTime() + 30_000_000_000L;
    while (written <= 0 && System.nanoTime() < deadline) {
      executors = get(ui + "/metrics/executors/prometheus");
      Matcher m = shuffleWrite.matcher(executors);
      if (m.find()) {
        assertTrue(m.group(1).contains("application_name=\"" + APP + "\""),
            "the queries join on application_name: " + m.group());
        assertTrue(m.group(1).contains("executor_id=\"driver\""),
            "the queries tell executors from the driver by executor_id: " + m.group());
        written = Double.parseDouble(m.group(2));
      }
      if (written <= 0) {
        Thread.sleep(200);
      }
    }
    if (written <= 0) {
      fail("no shuffle bytes written in " + ui + "/metrics/executors/prometheus:\n" + executors);
    }
    for (String name : documentedSparkSeries()) {
      assertTrue(executors.contains(name + "{"), name + " (docs/metrics.md) is not served:\n" + executors);
    }
    assertFalse(documentedSparkSeries().isEmpty(), "docs/metrics.md lists no Spark series");
    assertFalse(executors.contains("Spilled"),
        "Spark's executor endpoint now has a spill counter: read it instead of the estimate\n" + executors);

    // The PrometheusServlet sink on the driver's UI, at the path the operator sets.
    String driver = get(ui + conf.get("spark.metrics.conf.*.sink.prometheusServlet.path"));
    assertTrue(driver.contains("metrics_" + conf.get("spark.metrics.namespace") + "_driver_"),
        "the driver's own metrics under spark.metrics.namespace:\n" + driver);
  }
}
