package dev.strata.ingest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class RecordConverterTest {
  static final ObjectMapper JSON = new ObjectMapper();
  static final long T = 1_700_000_000_000L; // 2023-11-14T22:13:20Z
  static final RecordConverter PLAIN = new RecordConverter(IngestConf.RecordFormat.JSON, null, null);

  static RecordConverter.Result convert(RecordConverter c, String value) {
    return c.convert("readings", 2, 41, value == null ? null : value.getBytes(StandardCharsets.UTF_8), T);
  }

  static JsonNode source(RecordConverter.Result r) throws Exception {
    return JSON.readTree(r.source());
  }

  @Test
  void jsonObjectIndexedAsIsWithTheRecordsId() throws Exception {
    RecordConverter.Result r = convert(PLAIN, "{\"sensor\":\"a\",\"v\":1.5}");
    assertFalse(r.deadLetter());
    assertEquals("readings-2-41", r.id());
    JsonNode doc = source(r);
    assertEquals("a", doc.get("sensor").asText());
    assertEquals(1.5, doc.get("v").asDouble());
    assertEquals("2023-11-14T22:13:20Z", doc.get("@timestamp").asText());
  }

  @Test
  void idAndTimestampFields() throws Exception {
    RecordConverter c = new RecordConverter(IngestConf.RecordFormat.JSON, "uuid", "ts");
    RecordConverter.Result r = convert(c, "{\"uuid\":\"u-7\",\"ts\":1000}");
    assertEquals("u-7", r.id());
    assertEquals("1970-01-01T00:00:01Z", source(r).get("@timestamp").asText());
    r = convert(c, "{\"uuid\":12,\"ts\":\"2024-05-01T10:00:00.5+02:00\"}");
    assertEquals("12", r.id());
    assertEquals("2024-05-01T08:00:00.500Z", source(r).get("@timestamp").asText());
  }

  @Test
  void malformedRecordsBecomeDeadLettersWithReasons() throws Exception {
    RecordConverter c = new RecordConverter(IngestConf.RecordFormat.JSON, "uuid", "ts");
    String[][] cases = {
        {"{\"uuid\":", "not JSON"},
        {"[1,2]", "not a JSON object"},
        {"{\"ts\":1}", "id field \"uuid\" missing"},
        {"{\"uuid\":{\"a\":1},\"ts\":1}", "id field \"uuid\" missing, empty or not a string"},
        {"{\"uuid\":\"x\",\"ts\":\"yesterday\"}", "timestamp field \"ts\""},
        {"{\"uuid\":\"x\"}", "timestamp field \"ts\""},
        {null, "no value"},
    };
    for (String[] k : cases) {
      RecordConverter.Result r = convert(c, k[0]);
      assertTrue(r.deadLetter(), k[0]);
      assertTrue(r.reason().contains(k[1]), k[0] + " gave " + r.reason());
      assertEquals("readings-2-41", r.id(), "a dead letter keeps the record's id");
      JsonNode doc = source(r);
      assertEquals(r.reason(), doc.get("reason").asText());
      assertEquals(41, doc.get("offset").asLong());
      assertEquals(2, doc.get("partition").asInt());
      assertEquals(k[0] == null ? "" : k[0], doc.get("record").asText());
    }
  }

  @Test
  void invalidUtf8IsADeadLetterInBothFormats() {
    byte[] bad = {'{', (byte) 0xC3, '}'};
    for (IngestConf.RecordFormat f : IngestConf.RecordFormat.values()) {
      RecordConverter.Result r = new RecordConverter(f, null, null).convert("t", 0, 1, bad, T);
      assertTrue(r.deadLetter(), f.toString());
      assertEquals("value is not UTF-8 text", r.reason());
    }
  }

  @Test
  void rawPassthroughKeepsAnyText() throws Exception {
    RecordConverter c = new RecordConverter(IngestConf.RecordFormat.RAW, null, null);
    RecordConverter.Result r = convert(c, "not { json");
    assertFalse(r.deadLetter());
    assertEquals("not { json", source(r).get("message").asText());
    assertEquals("2023-11-14T22:13:20Z", source(r).get("@timestamp").asText());
  }

  @Test
  void longDeadLettersAreCut() throws Exception {
    String big = "x".repeat(RecordConverter.DEAD_LETTER_MAX_CHARS + 10);
    RecordConverter.Result r = convert(PLAIN, big);
    JsonNode doc = source(r);
    assertTrue(doc.get("truncated").asBoolean());
    assertEquals(RecordConverter.DEAD_LETTER_MAX_CHARS, doc.get("record").asText().length());
  }
}
