package dev.strata.ingest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

class IngestConfTest {

  /** The keys the operator always sets, with valid values. */
  static Map<String, String> minimal() {
    Map<String, String> m = new HashMap<>();
    m.put("spark.strata.pipeline", "sensors");
    m.put("spark.strata.checkpointDir", "/strata/checkpoint");
    m.put("spark.strata.kafka.bootstrapServers", "sensors-kafka-bootstrap:9093");
    m.put("spark.strata.kafka.topic", "sensor-readings");
    m.put("spark.strata.kafka.maxOffsetsPerTrigger", "400000");
    m.put("spark.strata.elasticsearch.url", "https://sensors-es-http:9200");
    m.put("spark.strata.elasticsearch.index", "sensor-readings");
    m.put("spark.strata.elasticsearch.shards", "3");
    m.put("spark.strata.elasticsearch.replicas", "1");
    m.put("spark.app.name", "not ours");
    m.put("spark.strata.shuffle.dataDirs", "/data/shuffle");
    return m;
  }

  static String problems(Map<String, String> m) {
    return assertThrows(IllegalArgumentException.class, () -> IngestConf.from(m)).getMessage();
  }

  @Test
  void defaultsAndDerivedValues() {
    IngestConf c = IngestConf.from(minimal());
    assertEquals("sensors", c.consumerGroup());
    assertEquals(400000L, c.maxOffsetsPerTrigger());
    assertEquals(1, c.minPartitions());
    assertEquals("sensor-readings-deadletter", c.esDeadLetterIndex());
    assertEquals(3, c.esShards());
    assertEquals(1, c.esReplicas());
    assertEquals(1000, c.bulkActions());
    assertEquals(5L << 20, c.bulkBytes());
    assertEquals("1d", c.rolloverMaxAge());
    assertEquals("50gb", c.rolloverMaxPrimaryShardSize());
    assertNull(c.deleteAfter());
    assertEquals(IngestConf.RecordFormat.JSON, c.recordFormat());
    assertNull(c.idField());
    assertNull(c.esUserEnv());
    assertNull(c.executorsConfigMap());
  }

  @Test
  void everyKeyRead() {
    Map<String, String> m = minimal();
    m.put("spark.strata.kafka.saslJaasConfigEnv", "KAFKA_JAAS");
    m.put("spark.strata.kafka.minPartitions", "8");
    m.put("spark.strata.elasticsearch.caPath", "/strata/es-ca/ca.crt");
    m.put("spark.strata.elasticsearch.userEnv", "ES_USER");
    m.put("spark.strata.elasticsearch.passwordEnv", "ES_PASSWORD");
    m.put("spark.strata.elasticsearch.deadLetterIndex", "sensors-dead");
    m.put("spark.strata.elasticsearch.bulkActions", "5000");
    m.put("spark.strata.elasticsearch.bulkBytes", "10485760");
    m.put("spark.strata.elasticsearch.rollover.maxAge", "12h");
    m.put("spark.strata.elasticsearch.rollover.maxPrimaryShardSize", "30gb");
    m.put("spark.strata.elasticsearch.delete.minAge", "30d");
    m.put("spark.strata.record.format", "raw");
    m.put("spark.strata.record.idField", "uuid");
    m.put("spark.strata.record.timestampField", "ts");
    m.put("spark.strata.executors.configMap", "sensors-executors");
    IngestConf c = IngestConf.from(m);
    assertEquals("KAFKA_JAAS", c.kafkaSaslJaasConfigEnv());
    assertEquals(8, c.minPartitions());
    assertEquals("/strata/es-ca/ca.crt", c.esCaPath());
    assertEquals("ES_USER", c.esUserEnv());
    assertEquals("ES_PASSWORD", c.esPasswordEnv());
    assertEquals("sensors-dead", c.esDeadLetterIndex());
    assertEquals(5000, c.bulkActions());
    assertEquals(10485760L, c.bulkBytes());
    assertEquals("12h", c.rolloverMaxAge());
    assertEquals("30gb", c.rolloverMaxPrimaryShardSize());
    assertEquals("30d", c.deleteAfter());
    assertEquals(IngestConf.RecordFormat.RAW, c.recordFormat());
    assertEquals("uuid", c.idField());
    assertEquals("ts", c.timestampField());
    assertEquals("sensors-executors", c.executorsConfigMap());
  }

  @Test
  void everyMissingKeyNamed() {
    String msg = problems(Map.of());
    for (String key : new String[] {"spark.strata.pipeline", "spark.strata.checkpointDir",
        "spark.strata.kafka.bootstrapServers", "spark.strata.kafka.topic",
        "spark.strata.kafka.maxOffsetsPerTrigger", "spark.strata.elasticsearch.url", "spark.strata.elasticsearch.index",
        "spark.strata.elasticsearch.shards", "spark.strata.elasticsearch.replicas"}) {
      assertTrue(msg.contains(key + ": missing"), key + " not named in: " + msg);
    }
  }

  @Test
  void badValuesNamed() {
    Object[][] cases = {
        {"spark.strata.kafka.maxOffsetsPerTrigger", "0", "not a positive whole number"},
        {"spark.strata.kafka.minPartitions", "many", "not a positive whole number"},
        {"spark.strata.elasticsearch.shards", "3000000000", "more than"},
        {"spark.strata.elasticsearch.replicas", "-1", "not a whole number"},
        {"spark.strata.elasticsearch.url", "sensors-es-http:9200", "not an http(s)://host[:port] URL"},
        {"spark.strata.elasticsearch.index", "Sensors", "not a valid index name"},
        {"spark.strata.elasticsearch.deadLetterIndex", "_dead", "not a valid index name"},
        {"spark.strata.elasticsearch.delete.minAge", "30 days", "not a duration"},
        {"spark.strata.elasticsearch.rollover.maxPrimaryShardSize", "50G", "not a size"},
        {"spark.strata.record.format", "avro", "neither json nor raw"},
        {"spark.strata.executors.configMap", "Sensors_Executors", "not a Kubernetes object name"},
        {"spark.strata.executors.configMap", "sensors-", "not a Kubernetes object name"},
        {"spark.strata.pipeline", "  ", "empty"},
        {"spark.strata.elasticsearch.bulkActoins", "10", "unknown key"},
    };
    for (Object[] c : cases) {
      Map<String, String> m = minimal();
      m.put((String) c[0], (String) c[1]);
      String msg = problems(m);
      assertTrue(msg.contains((String) c[0]) && msg.contains((String) c[2]),
          c[0] + "=" + c[1] + " gave: " + msg);
    }
  }

  @Test
  void credentialsComeInPairs() {
    Map<String, String> m = minimal();
    m.put("spark.strata.elasticsearch.userEnv", "ES_USER");
    assertTrue(problems(m).contains("spark.strata.elasticsearch.passwordEnv: missing"));
  }
}
