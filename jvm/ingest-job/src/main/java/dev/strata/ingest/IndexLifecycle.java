package dev.strata.ingest;

import co.elastic.clients.elasticsearch.ElasticsearchClient;
import co.elastic.clients.elasticsearch._types.ElasticsearchException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.StringReader;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the job sets up in Elasticsearch before its first batch, on every start (so a new plan
 * takes effect at the next start): an ILM policy and an index template for the pipeline's index,
 * the first write index behind the index's alias, and the dead-letter index.
 *
 * <ul>
 *   <li>The ILM policy (named after the index) rolls the write index over at the planned primary
 *       shard size or age and deletes an index the planned time after its rollover, so the data
 *       nodes' disks hold the planned retention.
 *   <li>The index template (patterns {@code <index>-*}) carries the planned shards and replicas:
 *       a new plan's shard count (following the planned data nodes) applies at the next rollover,
 *       as Elasticsearch cannot change an existing index's primary shard count.
 *   <li>The alias {@code <index>} points at the write index {@code <index>-000001} (created only
 *       when the alias does not exist yet); documents are written to the alias.
 *   <li>Dead letters get the same, apart: an ILM policy {@code <dead-letter index>} (rollover
 *       at {@link #DEAD_LETTER_MAX_AGE} or {@link #DEAD_LETTER_MAX_PRIMARY_SHARD_SIZE}, deleted
 *       when the index's data is), a template (patterns {@code <dead-letter index>-*}, one shard)
 *       at a higher priority than the index's (the default name {@code <index>-deadletter}
 *       matches {@code <index>-*} too), and the alias {@code <dead-letter index>} over
 *       {@code <dead-letter index>-000001}. Without a lifecycle a pipeline whose records turn
 *       malformed fills a single one-shard index without end. A dead-letter index of a release
 *       before this one (a plain index under the alias's name) is kept and written to as it
 *       was, without a lifecycle, which the job's log says; deleting it gives the lifecycle
 *       at the next start.
 * </ul>
 */
final class IndexLifecycle {
  private static final Logger LOG = LoggerFactory.getLogger(IndexLifecycle.class);
  private static final ObjectMapper JSON = new ObjectMapper();

  /**
   * The index template's priority; the dead-letter index's template is above it. Elasticsearch
   * refuses a template whose patterns overlap another's at the same priority, and its built-in
   * templates ({@code logs-*-*}, {@code metrics-*-*}, {@code synthetics-*-*}, ...) sit at 100,
   * Fleet's integrations up to 200: a pipeline named {@code logs-...} failed at its first start.
   * Elastic's documentation, "Avoid index pattern collisions" (elasticsearch 8.x,
   * docs/reference/indices/index-templates.asciidoc; now elastic/docs-content,
   * manage-data/data-store/templates.md), advises a priority over 500 for templates whose patterns
   * overlap the built-in ones.
   */
  static final int PRIORITY = 600;

  /** Dead letters are few: a dead-letter index rolls over monthly, or at this size. */
  static final String DEAD_LETTER_MAX_AGE = "30d";

  static final String DEAD_LETTER_MAX_PRIMARY_SHARD_SIZE = "10gb";

  private IndexLifecycle() {}

  /** The name of the first write index behind conf's alias. */
  static String firstWriteIndex(IngestConf conf) {
    return conf.esIndex() + "-000001";
  }

  static void apply(ElasticsearchClient es, IngestConf conf) throws IOException {
    String index = conf.esIndex();
    es.ilm().putLifecycle(r -> r.name(index).withJson(new StringReader(policy(conf).toString())));
    es.indices().putIndexTemplate(r -> r.name(index)
        .withJson(new StringReader(template(conf).toString())));
    String deadLetters = conf.esDeadLetterIndex();
    es.ilm().putLifecycle(r -> r.name(deadLetters)
        .withJson(new StringReader(deadLetterPolicy(conf).toString())));
    es.indices().putIndexTemplate(r -> r.name(deadLetters)
        .withJson(new StringReader(deadLetterTemplate(conf).toString())));
    bootstrap(es, index, IngestConf.ES_INDEX);
    if (es.indices().exists(r -> r.index(deadLetters)).value()
        && !es.indices().existsAlias(r -> r.name(deadLetters)).value()) {
      LOG.warn("the dead-letter index {} predates its lifecycle: dead letters go on into it, which no"
          + " lifecycle rolls over or deletes; delete it (or reindex it into {}) to get one at the next"
          + " start", deadLetters, deadLetters + "-000001");
    } else {
      bootstrap(es, deadLetters, IngestConf.ES_DEAD_LETTER_INDEX);
    }
    LOG.info("index lifecycle of {}: {} shards, {} replicas, policy {}", index, conf.esShards(),
        conf.esReplicas(), policy(conf));
  }

  /**
   * Creates {@code <alias>-000001} as the write index behind alias, unless the alias exists.
   * Another start may have won the race; anything else (an index named like the alias, for
   * instance) stops the job: documents would not go where the lifecycle expects.
   */
  private static void bootstrap(ElasticsearchClient es, String alias, String setting) throws IOException {
    if (es.indices().existsAlias(r -> r.name(alias)).value()) {
      return;
    }
    String first = alias + "-000001";
    try {
      es.indices().create(r -> r.index(first).aliases(alias, a -> a.isWriteIndex(true)));
      LOG.info("created the write index {} behind the alias {}", first, alias);
    } catch (ElasticsearchException e) {
      if (!"resource_already_exists_exception".equals(e.error().type())) {
        throw new IllegalStateException("cannot create the write index " + first + " behind the alias "
            + alias + " (" + setting + "): " + e.getMessage(), e);
      }
    }
  }

  /**
   * The dead-letter indices' ILM policy: rollover monthly or at {@link
   * #DEAD_LETTER_MAX_PRIMARY_SHARD_SIZE}, deleted when the index's own data is (kept when it is).
   */
  static ObjectNode deadLetterPolicy(IngestConf conf) {
    ObjectNode body = JSON.createObjectNode();
    ObjectNode phases = body.putObject("policy").putObject("phases");
    ObjectNode rollover = phases.putObject("hot").putObject("actions").putObject("rollover");
    rollover.put("max_age", DEAD_LETTER_MAX_AGE);
    rollover.put("max_primary_shard_size", DEAD_LETTER_MAX_PRIMARY_SHARD_SIZE);
    if (conf.deleteAfter() != null) {
      ObjectNode delete = phases.putObject("delete");
      delete.put("min_age", conf.deleteAfter());
      delete.putObject("actions").putObject("delete");
    }
    return body;
  }

  /**
   * The ILM policy: rollover in the hot phase, then delete after the planned time (no delete
   * phase when the plan sets none: the indices are kept).
   */
  static ObjectNode policy(IngestConf conf) {
    ObjectNode body = JSON.createObjectNode();
    ObjectNode phases = body.putObject("policy").putObject("phases");
    ObjectNode rollover = phases.putObject("hot").putObject("actions").putObject("rollover");
    rollover.put("max_age", conf.rolloverMaxAge());
    rollover.put("max_primary_shard_size", conf.rolloverMaxPrimaryShardSize());
    if (conf.deleteAfter() != null) {
      ObjectNode delete = phases.putObject("delete");
      delete.put("min_age", conf.deleteAfter());
      delete.putObject("actions").putObject("delete");
    }
    return body;
  }

  /** The index template: planned shards and replicas, the lifecycle, @timestamp as a date. */
  static ObjectNode template(IngestConf conf) {
    ObjectNode body = JSON.createObjectNode();
    body.putArray("index_patterns").add(conf.esIndex() + "-*");
    body.put("priority", PRIORITY);
    ObjectNode template = body.putObject("template");
    ObjectNode settings = template.putObject("settings");
    settings.put("index.number_of_shards", conf.esShards());
    settings.put("index.number_of_replicas", conf.esReplicas());
    settings.put("index.lifecycle.name", conf.esIndex());
    settings.put("index.lifecycle.rollover_alias", conf.esIndex());
    template.putObject("mappings").putObject("properties")
        .putObject(RecordConverter.TIMESTAMP).put("type", "date");
    return body;
  }

  /**
   * The dead-letter indices' template: one shard (dead letters are few), planned replicas, their
   * own lifecycle and rollover alias.
   */
  static ObjectNode deadLetterTemplate(IngestConf conf) {
    ObjectNode body = JSON.createObjectNode();
    body.putArray("index_patterns").add(conf.esDeadLetterIndex() + "-*");
    body.put("priority", PRIORITY + 100);
    ObjectNode template = body.putObject("template");
    ObjectNode settings = template.putObject("settings");
    settings.put("index.number_of_shards", 1);
    settings.put("index.number_of_replicas", conf.esReplicas());
    settings.put("index.lifecycle.name", conf.esDeadLetterIndex());
    settings.put("index.lifecycle.rollover_alias", conf.esDeadLetterIndex());
    ObjectNode props = template.putObject("mappings").putObject("properties");
    props.putObject(RecordConverter.TIMESTAMP).put("type", "date");
    props.putObject("reason").put("type", "keyword");
    props.putObject("topic").put("type", "keyword");
    props.putObject("partition").put("type", "integer");
    props.putObject("offset").put("type", "long");
    props.putObject("record").put("type", "text");
    return body;
  }
}
