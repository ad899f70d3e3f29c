package dev.strata.ingest;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.Serializable;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.format.DateTimeParseException;

/**
 * Turns one Kafka record into the document it becomes: either a document for the pipeline's
 * index or, when the record cannot be indexed as configured, a dead letter carrying the reason and
 * the record's text. A record is never dropped and never stops the job.
 *
 * <p>Document ids are deterministic so that a batch replayed after a restart (Structured
 * Streaming replays the batch it had not committed) overwrites the same documents instead of adding
 * copies: topic-partition-offset, or the value of the configured id field. Dead letters use the
 * topic-partition-offset id too, in their own index.
 */
public final class RecordConverter implements Serializable {
  private static final long serialVersionUID = 1L;

  /** The time field every document gets (the index template maps it as a date). */
  public static final String TIMESTAMP = "@timestamp";

  /** A dead letter keeps at most this many characters of the record (the rest is cut). */
  static final int DEAD_LETTER_MAX_CHARS = 32 * 1024;

  private static final ObjectMapper JSON = new ObjectMapper();

  private final IngestConf.RecordFormat format;
  private final String idField;
  private final String timestampField;

  public RecordConverter(IngestConf.RecordFormat format, String idField, String timestampField) {
    this.format = format;
    this.idField = idField;
    this.timestampField = timestampField;
  }

  public static RecordConverter of(IngestConf conf) {
    return new RecordConverter(conf.recordFormat(), conf.idField(), conf.timestampField());
  }

  /** What one record becomes: a document, or a dead letter (then reason is set). */
  public record Result(String id, String source, String reason) {
    public boolean deadLetter() {
      return reason != null;
    }
  }

  /** The id a record gets unless an id field is configured. */
  public static String recordId(String topic, int partition, long offset) {
    return topic + "-" + partition + "-" + offset;
  }

  /**
   * Converts a record. kafkaTimestampMillis is the record's Kafka timestamp, used as @timestamp
   * when no timestamp field is configured.
   */
  public Result convert(String topic, int partition, long offset, byte[] value,
      long kafkaTimestampMillis) {
    String id = recordId(topic, partition, offset);
    if (value == null) {
      return deadLetter(id, "no value (a tombstone or an empty record)", topic, partition, offset,
          "", kafkaTimestampMillis);
    }
    String text;
    try {
      text = StandardCharsets.UTF_8.newDecoder()
          .onMalformedInput(CodingErrorAction.REPORT)
          .onUnmappableCharacter(CodingErrorAction.REPORT)
          .decode(ByteBuffer.wrap(value)).toString();
    } catch (CharacterCodingException e) {
      return deadLetter(id, "value is not UTF-8 text", topic, partition, offset,
          new String(value, StandardCharsets.UTF_8), kafkaTimestampMillis);
    }
    String kafkaTime = Instant.ofEpochMilli(kafkaTimestampMillis).toString();
    if (format == IngestConf.RecordFormat.RAW) {
      ObjectNode doc = JSON.createObjectNode();
      doc.put(TIMESTAMP, kafkaTime);
      doc.put("message", text);
      return new Result(id, doc.toString(), null);
    }
    JsonNode node;
    try {
      node = JSON.readTree(text);
    } catch (JsonProcessingException e) {
      return deadLetter(id, "not JSON: " + e.getOriginalMessage(), topic, partition, offset, text,
          kafkaTimestampMillis);
    }
    if (node == null || !node.isObject()) {
      return deadLetter(id, "not a JSON object", topic, partition, offset, text,
          kafkaTimestampMillis);
    }
    ObjectNode doc = (ObjectNode) node;
    if (idField != null) {
      JsonNode v = doc.get(idField);
      if (v == null || !(v.isTextual() || v.isIntegralNumber()) || v.asText().isEmpty()) {
        return deadLetter(id, "id field \"" + idField + "\" missing, empty or not a string or integer",
            topic, partition, offset, text, kafkaTimestampMillis);
      }
      if (v.asText().getBytes(StandardCharsets.UTF_8).length > 512) {
        return deadLetter(id, "id field \"" + idField + "\" longer than 512 bytes", topic,
            partition, offset, text, kafkaTimestampMillis);
      }
      id = v.asText();
    }
    if (timestampField != null) {
      String t = timestamp(doc.get(timestampField));
      if (t == null) {
        return deadLetter(recordId(topic, partition, offset), "timestamp field \"" + timestampField
            + "\" missing or neither epoch milliseconds nor an ISO-8601 instant", topic, partition,
            offset, text, kafkaTimestampMillis);
      }
      doc.put(TIMESTAMP, t);
    } else if (!doc.has(TIMESTAMP)) {
      doc.put(TIMESTAMP, kafkaTime);
    }
    return new Result(id, doc.toString(), null);
  }

  /** Epoch milliseconds or an ISO-8601 instant, as an ISO-8601 instant; null if neither. */
  static String timestamp(JsonNode v) {
    if (v == null) {
      return null;
    }
    if (v.isIntegralNumber()) {
      return Instant.ofEpochMilli(v.asLong()).toString();
    }
    if (v.isTextual()) {
      try {
        return Instant.parse(v.asText()).toString();
      } catch (DateTimeParseException e) {
        return null;
      }
    }
    return null;
  }

  /**
   * The dead letter of a document Elasticsearch refused (a mapping conflict, say): the record's
   * own id, the reason Elasticsearch gave, and the document as it was sent.
   */
  public static Result rejected(String topic, int partition, long offset, String document,
      String reason, long kafkaTimestampMillis) {
    return deadLetter(recordId(topic, partition, offset), "rejected by Elasticsearch: " + reason,
        topic, partition, offset, document, kafkaTimestampMillis);
  }

  private static Result deadLetter(String id, String reason, String topic, int partition,
      long offset, String text, long kafkaTimestampMillis) {
    ObjectNode doc = JSON.createObjectNode();
    doc.put(TIMESTAMP, Instant.ofEpochMilli(kafkaTimestampMillis).toString());
    doc.put("reason", reason);
    doc.put("topic", topic);
    doc.put("partition", partition);
    doc.put("offset", offset);
    doc.put("truncated", text.length() > DEAD_LETTER_MAX_CHARS);
    doc.put("record", text.length() > DEAD_LETTER_MAX_CHARS
        ? text.substring(0, DEAD_LETTER_MAX_CHARS) : text);
    return new Result(id, doc.toString(), reason);
  }
}
