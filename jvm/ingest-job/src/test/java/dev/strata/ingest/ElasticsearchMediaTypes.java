package dev.strata.ingest;

import java.util.List;
import java.util.Map;
import org.opensearch.common.xcontent.XContentType;
import org.opensearch.core.xcontent.MediaType;
import org.opensearch.core.xcontent.spi.MediaTypeProvider;

/**
 * Test only (see ElasticsearchCompat): the tests' OpenSearch node takes the media type the
 * official Elasticsearch client sends, application/vnd.elasticsearch+json, as JSON.
 */
public class ElasticsearchMediaTypes implements MediaTypeProvider {
  @Override
  public List<MediaType> getMediaTypes() {
    return List.of();
  }

  @Override
  public Map<String, MediaType> getAdditionalMediaTypes() {
    return Map.of("application/vnd.elasticsearch+json", XContentType.JSON);
  }
}
