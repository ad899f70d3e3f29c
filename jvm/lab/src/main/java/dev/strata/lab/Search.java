package dev.strata.lab;

import dev.strata.ingest.ElasticsearchCompat;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import org.opensearch.action.admin.cluster.health.ClusterHealthResponse;
import org.opensearch.common.settings.Settings;
import org.opensearch.node.InternalSettingsPreparer;
import org.opensearch.node.Node;
import org.opensearch.transport.Netty4Plugin;

/**
 * The lab's search server: one OpenSearch node (the version the ingestion job's tests run; the
 * package registries serve no Elasticsearch) named as ECK names the pipeline's nodes, in a
 * cluster named after the pipeline's Elasticsearch, which is the {@code cluster} label the
 * Elasticsearch exporter gives its series. Its write thread pool is as small as the arguments
 * say, so a bulk load from a few clients fills its queue and has writes rejected, as a
 * saturated data node does. It loads the ingestion job's tests' ElasticsearchCompat, as they do,
 * for what the job's Elasticsearch client needs of Elasticsearch (the product header, ILM).
 */
final class Search {
  private Search() {}

  static void main(String[] args) throws Exception {
    if (args.length != 6) {
      throw new IllegalArgumentException(
          "search <home> <cluster name> <node name> <http port> <write threads> <write queue>");
    }
    Path home = Files.createDirectories(Path.of(args[0]));
    String node = args[2];
    Settings settings = Settings.builder()
        .put("path.home", home.toString())
        .put("path.data", home.resolve("data").toString())
        .put("cluster.name", args[1])
        .put("node.name", node)
        .put("discovery.type", "single-node")
        .put("network.host", "127.0.0.1")
        .put("http.port", Integer.parseInt(args[3]))
        .put("transport.port", 0)
        .put("http.type", "netty4")
        .put("transport.type", "netty4")
        // the machine's disk may be fuller than the default watermarks allow
        .put("cluster.routing.allocation.disk.threshold_enabled", false)
        .put("thread_pool.write.size", Integer.parseInt(args[4]))
        .put("thread_pool.write.queue_size", Integer.parseInt(args[5]))
        .put("thread_pool.search.size", 1)
        .build();
    Node n = new Node(InternalSettingsPreparer.prepareEnvironment(settings, Map.of(), null, () -> node),
        List.of(Netty4Plugin.class, ElasticsearchCompat.class), true) {};
    n.start();
    ClusterHealthResponse health = n.client().admin().cluster().prepareHealth().setWaitForYellowStatus().get();
    if (health.isTimedOut()) {
      throw new IllegalStateException("the search node did not start");
    }
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      try {
        n.close();
      } catch (Exception e) {
        e.printStackTrace();
      }
      stopped.countDown();
    }, "lab-search-close"));
    System.out.println("lab: search node " + node + " of cluster " + args[1] + " on port " + args[3]);
    stopped.await();
  }
}
