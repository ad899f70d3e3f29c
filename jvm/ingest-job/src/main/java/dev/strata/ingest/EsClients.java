package dev.strata.ingest;

import co.elastic.clients.elasticsearch.ElasticsearchClient;
import co.elastic.clients.json.jackson.JacksonJsonpMapper;
import co.elastic.clients.transport.TransportUtils;
import co.elastic.clients.transport.rest_client.RestClientTransport;
import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.HashMap;
import java.util.Map;
import javax.net.ssl.SSLContext;
import org.apache.http.HttpHost;
import org.apache.http.auth.AuthScope;
import org.apache.http.auth.UsernamePasswordCredentials;
import org.apache.http.impl.client.BasicCredentialsProvider;
import org.elasticsearch.client.RestClient;

/**
 * The job's Elasticsearch clients: the official Java client (co.elastic.clients:elasticsearch-java)
 * over its low-level REST client, with ECK's CA and the job's own credentials. One client per
 * JVM and configuration, shared by the tasks of every batch (a client holds a connection pool and
 * I/O threads; opening one per task would cost a TLS handshake per partition and batch).
 */
final class EsClients {
  private static final Map<String, ElasticsearchClient> SHARED = new HashMap<>();

  private EsClients() {}

  /** The shared client for conf's URL and credentials; closed when the JVM exits. */
  static synchronized ElasticsearchClient shared(IngestConf conf) {
    String key = conf.esUrl() + "|" + conf.esCaPath() + "|" + conf.esUserEnv();
    ElasticsearchClient c = SHARED.get(key);
    if (c == null) {
      c = open(conf);
      ElasticsearchClient opened = c;
      Runtime.getRuntime().addShutdownHook(new Thread(() -> {
        try {
          opened._transport().close();
        } catch (IOException e) {
          // the JVM is exiting
        }
      }, "strata-es-client-close"));
      SHARED.put(key, c);
    }
    return c;
  }

  /**
   * A new client. The user and password come from the environment variables the keys name (the
   * operator fills them from the job's Secret): a Spark setting would show them in the UI.
   */
  static ElasticsearchClient open(IngestConf conf) {
    String user = null;
    String password = null;
    if (conf.esUserEnv() != null) {
      user = Env.require(conf.esUserEnv(), IngestConf.ES_USER_ENV);
      password = Env.require(conf.esPasswordEnv(), IngestConf.ES_PASSWORD_ENV);
    }
    SSLContext ssl = null;
    if (conf.esCaPath() != null) {
      try {
        ssl = TransportUtils.sslContextFromHttpCaCrt(new File(conf.esCaPath()));
      } catch (IOException | RuntimeException e) {
        throw new IllegalArgumentException(IngestConf.ES_CA_PATH + ": cannot read the CA certificate "
            + conf.esCaPath() + ": " + e.getMessage(), e);
      }
    }
    BasicCredentialsProvider creds = null;
    if (user != null) {
      creds = new BasicCredentialsProvider();
      creds.setCredentials(AuthScope.ANY, new UsernamePasswordCredentials(user, password));
    }
    BasicCredentialsProvider credentials = creds;
    SSLContext sslContext = ssl;
    RestClient rest = RestClient.builder(HttpHost.create(conf.esUrl()))
        .setHttpClientConfigCallback(h -> {
          if (credentials != null) {
            h.setDefaultCredentialsProvider(credentials);
          }
          if (sslContext != null) {
            h.setSSLContext(sslContext);
          }
          return h;
        })
        .build();
    return new ElasticsearchClient(new RestClientTransport(rest, new JacksonJsonpMapper()));
  }

  static void close(ElasticsearchClient c) {
    try {
      c._transport().close();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
