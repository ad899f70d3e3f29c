package dev.strata.ingest;

import java.util.Optional;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import org.opensearch.common.settings.Settings;
import org.opensearch.http.HttpServerTransport;
import org.opensearch.plugins.Plugin;
import org.opensearch.plugins.SecureHttpTransportSettingsProvider;
import org.opensearch.plugins.SecureSettingsFactory;
import org.opensearch.plugins.SecureTransportSettingsProvider;
import org.opensearch.plugins.TransportExceptionHandler;

/**
 * Test only: HTTPS for the test's OpenSearch node, the way OpenSearch 2.19's security plugin
 * provides it. A plugin's SecureSettingsFactory (Plugin.getSecureSettingFactory) gives the
 * Netty4 module's "netty4-secure" HTTP transport (http.type) the server's SSLEngine; the test sets
 * the context before it starts the node.
 */
public class TlsHttpPlugin extends Plugin {
  /** The server's TLS context: a certificate the test's CA signed. */
  static volatile SSLContext context;

  @Override
  public Optional<SecureSettingsFactory> getSecureSettingFactory(Settings settings) {
    return Optional.of(new SecureSettingsFactory() {
      @Override
      public Optional<SecureTransportSettingsProvider> getSecureTransportSettingsProvider(Settings s) {
        return Optional.empty();
      }

      @Override
      public Optional<SecureHttpTransportSettingsProvider> getSecureHttpTransportSettingsProvider(Settings s) {
        return Optional.of(new SecureHttpTransportSettingsProvider() {
          @Override
          public Optional<TransportExceptionHandler> buildHttpServerExceptionHandler(Settings s2,
              HttpServerTransport transport) {
            return Optional.empty();
          }

          @Override
          public Optional<SSLEngine> buildSecureHttpServerEngine(Settings s2, HttpServerTransport transport) {
            SSLEngine engine = context.createSSLEngine();
            engine.setUseClientMode(false);
            return Optional.of(engine);
          }
        });
      }
    });
  }
}
