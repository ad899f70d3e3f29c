package dev.strata.ingest;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import javax.net.ssl.SSLContext;
import java.util.Map;
import org.opensearch.action.admin.cluster.health.ClusterHealthResponse;
import org.opensearch.client.Client;
import org.opensearch.common.settings.Settings;
import org.opensearch.node.InternalSettingsPreparer;
import org.opensearch.node.Node;
import org.opensearch.plugins.Plugin;
import org.opensearch.transport.Netty4Plugin;

/**
 * A real search server for the tests: one OpenSearch node (org.opensearch:opensearch with its
 * HTTP transport, transport-netty4-client, from Maven Central) in the test JVM, plus the test-only
 * ElasticsearchCompat plugin. Elasticsearch itself cannot be started from the package registries
 * this project may use (docs/ingest-job.md, "Tests").
 */
final class EmbeddedSearch implements AutoCloseable {
  private final Node node;
  private final String url;

  EmbeddedSearch(Path dir) throws Exception {
    this(dir, "search", null);
  }

  /**
   * A node named name under dir; with tls, it serves HTTPS (TlsHttpPlugin) with that context's
   * certificate, at https://localhost:port.
   */
  EmbeddedSearch(Path dir, String name, SSLContext tls) throws Exception {
    int port = EmbeddedKafka.freePort();
    Path home = Files.createDirectories(dir.resolve(name));
    Settings settings = Settings.builder()
        .put("path.home", home.toString())
        .put("path.data", home.resolve("data").toString())
        .put("cluster.name", "strata-test")
        .put("node.name", "search-0")
        .put("discovery.type", "single-node")
        .put("network.host", "127.0.0.1")
        .put("http.port", port)
        .put("transport.port", EmbeddedKafka.freePort())
        .put("http.type", tls == null ? "netty4" : "netty4-secure")
        .put("transport.type", "netty4")
        // the machine's disk may be fuller than the default watermarks allow
        .put("cluster.routing.allocation.disk.threshold_enabled", false)
        .put("thread_pool.write.size", 1)
        .put("thread_pool.search.size", 1)
        .build();
    List<Class<? extends Plugin>> plugins = new ArrayList<>(List.of(Netty4Plugin.class, ElasticsearchCompat.class));
    if (tls != null) {
      TlsHttpPlugin.context = tls;
      plugins.add(TlsHttpPlugin.class);
    }
    node = new Node(InternalSettingsPreparer.prepareEnvironment(settings, Map.of(), null,
        () -> "search-0"), plugins, true) {};
    node.start();
    ClusterHealthResponse health = node.client().admin().cluster().prepareHealth()
        .setWaitForYellowStatus().get();
    if (health.isTimedOut()) {
      throw new IllegalStateException("the search node did not start");
    }
    url = tls == null ? "http://127.0.0.1:" + port : "https://localhost:" + port;
  }

  String url() {
    return url;
  }

  Client client() {
    return node.client();
  }

  /** The number of documents in index (an alias or an index), after a refresh. */
  long count(String index) {
    client().admin().indices().prepareRefresh(index).get();
    return client().prepareSearch(index).setSize(0).setTrackTotalHits(true).get()
        .getHits().getTotalHits().value;
  }

  @Override
  public void close() throws Exception {
    node.close();
  }
}
