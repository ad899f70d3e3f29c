package dev.strata.ingest;

import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;
import org.opensearch.cluster.metadata.IndexNameExpressionResolver;
import org.opensearch.cluster.node.DiscoveryNodes;
import org.opensearch.common.settings.ClusterSettings;
import org.opensearch.common.settings.IndexScopedSettings;
import org.opensearch.common.settings.Setting;
import org.opensearch.common.settings.Settings;
import org.opensearch.common.settings.SettingsFilter;
import org.opensearch.common.util.concurrent.ThreadContext;
import org.opensearch.core.rest.RestStatus;
import org.opensearch.plugins.ActionPlugin;
import org.opensearch.plugins.Plugin;
import org.opensearch.rest.BaseRestHandler;
import org.opensearch.rest.BytesRestResponse;
import org.opensearch.rest.RestController;
import org.opensearch.rest.RestHandler;
import org.opensearch.rest.RestRequest;

/**
 * Test only: what the tests' OpenSearch node lacks of Elasticsearch for the job's official
 * Elasticsearch client (docs/ingest-job.md, "Tests"). Never part of the job.
 *
 * <ul>
 *   <li>The product header: elasticsearch-java refuses a server whose responses lack
 *       {@code X-Elastic-Product: Elasticsearch} (ElasticsearchTransportBase.checkProductHeader).
 *   <li>ILM: OpenSearch has no {@code _ilm} API (it has ISM instead). The policy the job puts is
 *       recorded, for the tests to check its body; nothing enforces it.
 *   <li>The index settings ILM reads, {@code index.lifecycle.name} and
 *       {@code index.lifecycle.rollover_alias}, which OpenSearch would refuse as unknown.
 *   <li>Basic authentication, when a test requires it (requireBasicAuth): a request without the
 *       expected user and password gets 401 with a Basic challenge, as Elasticsearch answers it.
 *       Only the credentials are checked, not a role's privileges: OpenSearch's own security
 *       plugin is a separate distribution that needs TLS certificates and its own configuration
 *       index, and its roles are not Elasticsearch's.
 * </ul>
 * The client's media type ({@code application/vnd.elasticsearch+json; compatible-with=8}) is
 * taken as JSON by ElasticsearchMediaTypes, registered through OpenSearch's MediaTypeProvider
 * service (src/test/resources/META-INF/services).
 */
public class ElasticsearchCompat extends Plugin implements ActionPlugin {
  /** The ILM policies put so far, by name, as JSON. */
  static final Map<String, String> POLICIES = new ConcurrentHashMap<>();

  /** The Authorization header every HTTP request must carry; null: none required. */
  static volatile String requiredAuthorization;
  /** HTTP requests refused for missing or wrong credentials, and requests let through with them. */
  static final AtomicLong REFUSED = new AtomicLong();
  static final AtomicLong AUTHENTICATED = new AtomicLong();

  /** From now on, every HTTP request must authenticate as user with password. */
  static void requireBasicAuth(String user, String password) {
    requiredAuthorization = "Basic " + Base64.getEncoder().encodeToString(
        (user + ":" + password).getBytes(StandardCharsets.UTF_8));
  }

  @Override
  public List<Setting<?>> getSettings() {
    return List.of(
        Setting.simpleString("index.lifecycle.name", Setting.Property.IndexScope,
            Setting.Property.Dynamic),
        Setting.simpleString("index.lifecycle.rollover_alias", Setting.Property.IndexScope,
            Setting.Property.Dynamic));
  }

  @Override
  public UnaryOperator<RestHandler> getRestHandlerWrapper(ThreadContext threadContext) {
    return h -> (request, channel, client) -> {
      threadContext.addResponseHeader("X-Elastic-Product", "Elasticsearch");
      String required = requiredAuthorization;
      if (required != null) {
        if (!required.equals(request.header("Authorization"))) {
          REFUSED.incrementAndGet();
          BytesRestResponse refused = new BytesRestResponse(RestStatus.UNAUTHORIZED,
              "application/json", "{\"error\":\"missing or wrong credentials\"}");
          refused.addHeader("WWW-Authenticate", "Basic realm=\"security\" charset=\"UTF-8\"");
          channel.sendResponse(refused);
          return;
        }
        AUTHENTICATED.incrementAndGet();
      }
      h.handleRequest(request, channel, client);
    };
  }

  @Override
  public List<RestHandler> getRestHandlers(Settings settings, RestController restController,
      ClusterSettings clusterSettings, IndexScopedSettings indexScopedSettings,
      SettingsFilter settingsFilter, IndexNameExpressionResolver resolver,
      Supplier<DiscoveryNodes> nodes) {
    return List.of(new IlmPolicies());
  }

  /** PUT and GET _ilm/policy/{name}: stores and returns the body. */
  static final class IlmPolicies extends BaseRestHandler {
    @Override
    public String getName() {
      return "strata_test_ilm_policies";
    }

    @Override
    public List<Route> routes() {
      return List.of(new Route(RestRequest.Method.PUT, "/_ilm/policy/{name}"),
          new Route(RestRequest.Method.GET, "/_ilm/policy/{name}"));
    }

    @Override
    protected RestChannelConsumer prepareRequest(RestRequest request,
        org.opensearch.client.node.NodeClient client) {
      String name = request.param("name");
      if (request.method() == RestRequest.Method.PUT) {
        POLICIES.put(name, request.content().utf8ToString());
        return channel -> channel.sendResponse(
            new BytesRestResponse(RestStatus.OK, "application/json", "{\"acknowledged\":true}"));
      }
      String body = POLICIES.get(name);
      return channel -> channel.sendResponse(body == null
          ? new BytesRestResponse(RestStatus.NOT_FOUND, "application/json", "{}")
          : new BytesRestResponse(RestStatus.OK, "application/json", "{\"" + name + "\":" + body + "}"));
    }
  }
}
