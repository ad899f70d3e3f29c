package dev.strata.ingest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The bodies IndexLifecycle puts (IngestJobTest checks them against a server). */
class IndexLifecycleTest {
  static IngestConf conf(Map<String, String> extra) {
    Map<String, String> m = new HashMap<>();
    m.put("spark.strata.pipeline", "sensors");
    m.put("spark.strata.checkpointDir", "/strata/checkpoint");
    m.put("spark.strata.kafka.bootstrapServers", "k:9092");
    m.put("spark.strata.kafka.topic", "readings");
    m.put("spark.strata.kafka.maxOffsetsPerTrigger", "1000");
    m.put("spark.strata.elasticsearch.url", "https://es:9200");
    m.put("spark.strata.elasticsearch.index", "readings");
    m.put("spark.strata.elasticsearch.shards", "6");
    m.put("spark.strata.elasticsearch.replicas", "1");
    m.putAll(extra);
    return IngestConf.from(m);
  }

  @Test
  void withoutAPlannedRetentionIndicesAreKept() {
    JsonNode phases = IndexLifecycle.policy(conf(Map.of())).get("policy").get("phases");
    assertFalse(phases.has("delete"), phases.toString());
    JsonNode rollover = phases.get("hot").get("actions").get("rollover");
    assertEquals("1d", rollover.get("max_age").asText());
    assertEquals("50gb", rollover.get("max_primary_shard_size").asText());
  }

  @Test
  void thePlannedRetentionDeletesAfterRollover() {
    JsonNode delete = IndexLifecycle.policy(conf(Map.of(
        "spark.strata.elasticsearch.delete.minAge", "1209600s"))).get("policy").get("phases")
        .get("delete");
    assertEquals("1209600s", delete.get("min_age").asText());
    assertTrue(delete.get("actions").has("delete"));
  }

  @Test
  void theTemplateCarriesThePlanAndTheDeadLettersEscapeIt() {
    IngestConf c = conf(Map.of());
    JsonNode t = IndexLifecycle.template(c);
    assertEquals("readings-*", t.get("index_patterns").get(0).asText());
    JsonNode settings = t.get("template").get("settings");
    assertEquals(6, settings.get("index.number_of_shards").asInt());
    assertEquals(1, settings.get("index.number_of_replicas").asInt());
    assertEquals("readings", settings.get("index.lifecycle.rollover_alias").asText());
    assertEquals("readings-000001", IndexLifecycle.firstWriteIndex(c));
    // readings-deadletter-000001 matches readings-*: its own template must win.
    JsonNode dl = IndexLifecycle.deadLetterTemplate(c);
    assertEquals("readings-deadletter-*", dl.get("index_patterns").get(0).asText());
    assertTrue(dl.get("priority").asInt() > t.get("priority").asInt());
    // Above Elasticsearch's built-in templates (100) and Fleet's (up to 200): a pipeline named
    // logs-... or metrics-... must not collide with them.
    assertTrue(t.get("priority").asInt() > 500, "index template priority " + t.get("priority"));
    JsonNode dls = dl.get("template").get("settings");
    assertEquals("readings-deadletter", dls.get("index.lifecycle.name").asText());
    assertEquals("readings-deadletter", dls.get("index.lifecycle.rollover_alias").asText());
    assertEquals(1, dls.get("index.number_of_shards").asInt());
  }

  @Test
  void deadLettersRollOverAndGoWithTheData() {
    JsonNode kept = IndexLifecycle.deadLetterPolicy(conf(Map.of())).get("policy").get("phases");
    assertFalse(kept.has("delete"), "kept as long as the index's data: " + kept);
    JsonNode rollover = kept.get("hot").get("actions").get("rollover");
    assertEquals("30d", rollover.get("max_age").asText());
    assertEquals("10gb", rollover.get("max_primary_shard_size").asText());
    JsonNode delete = IndexLifecycle.deadLetterPolicy(conf(Map.of(
        "spark.strata.elasticsearch.delete.minAge", "1209600s"))).get("policy").get("phases")
        .get("delete");
    assertEquals("1209600s", delete.get("min_age").asText());
    assertTrue(delete.get("actions").has("delete"));
  }
}
