package dev.strata.ingest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.sql.Timestamp;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.RepeatedTest;
import org.junit.jupiter.api.Test;

/**
 * A partition whose first bulk requests are refused whole with 429, as a full write queue refuses
 * them, is written in full once the node accepts again. With BulkIngester's own retries this test
 * hung (with or without a periodic flush), as the lab's job once stopped committing after a
 * saturated search node, neither failing nor restarting: see PartitionWriter.Bulk. The node here is a bare HTTP server answering _bulk, so the
 * refusals come back at once, which is what makes the second arrive before the first one's retry.
 */
class PartitionWriterRetryTest {
  private HttpServer server;
  private final AtomicInteger requests = new AtomicInteger();
  private final Set<String> indexed = ConcurrentHashMap.newKeySet();
  /** How many bulk requests are refused whole before the node accepts. */
  private volatile int refuseFirst;

  @BeforeEach
  void start() throws IOException {
    server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    server.createContext("/_bulk", this::bulk);
    server.start();
  }

  @AfterEach
  void stop() {
    server.stop(0);
  }

  // Repeated: the hang this guards against depended on timing (it came within 4 runs).
  @RepeatedTest(3)
  void twoRefusedBulksInARowAreRetriedToTheEnd() {
    refuseFirst = 2;
    requests.set(0);
    indexed.clear();
    PartitionWriter.Summary s = assertTimeoutPreemptively(Duration.ofMinutes(2),
        () -> write(100, 10));
    assertEquals(100, s.documents());
    assertEquals(0, s.deadLetters());
    assertEquals(99L, s.lastOffsets().get(PartitionWriter.Summary.key("t", 0)));
    assertEquals(100, indexed.size(), "documents the node accepted");
    assertTrue(requests.get() > 10, "the refused requests were sent again: " + requests.get());
  }

  @Test
  void aNodeThatKeepsRefusingFailsTheTask() {
    refuseFirst = Integer.MAX_VALUE;
    Exception e = assertTimeoutPreemptively(Duration.ofMinutes(2),
        () -> assertThrows(IllegalStateException.class,
            () -> write(20, 10)));
    assertTrue(e.getMessage().contains("429"), e.getMessage());
  }

  /** Writes n records of one Kafka partition in bulks of bulkActions; returns the summary. */
  private PartitionWriter.Summary write(int n, int bulkActions) throws Exception {
    Map<String, String> m = new HashMap<>();
    m.put("spark.strata.pipeline", "retry");
    m.put("spark.strata.checkpointDir", "/nonexistent");
    m.put("spark.strata.kafka.bootstrapServers", "127.0.0.1:9");
    m.put("spark.strata.kafka.topic", "t");
    m.put("spark.strata.kafka.maxOffsetsPerTrigger", String.valueOf(n));
    m.put("spark.strata.elasticsearch.shards", "1");
    m.put("spark.strata.elasticsearch.replicas", "0");
    m.put("spark.strata.elasticsearch.url",
        "http://127.0.0.1:" + server.getAddress().getPort());
    m.put("spark.strata.elasticsearch.index", "retry");
    m.put("spark.strata.elasticsearch.bulkActions", String.valueOf(bulkActions));
    IngestConf conf = IngestConf.from(m);
    List<Row> rows = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      byte[] v = ("{\"i\":" + i + "}").getBytes(StandardCharsets.UTF_8);
      rows.add(RowFactory.create("t", 0, (long) i, v, new Timestamp(1_700_000_000_000L + i)));
    }
    var es = EsClients.open(conf);
    try {
      Iterator<PartitionWriter.Summary> out = new PartitionWriter(conf, () -> es)
          .call(rows.iterator());
      return out.next();
    } finally {
      EsClients.close(es);
    }
  }

  /** Answers a _bulk request: every item refused with 429 while refuseFirst lasts, else created. */
  private void bulk(HttpExchange x) throws IOException {
    String body = new String(x.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
    boolean refuse = requests.incrementAndGet() <= refuseFirst;
    StringBuilder items = new StringBuilder();
    String[] lines = body.split("\n");
    for (int i = 0; i + 1 < lines.length; i += 2) {
      // {"index":{"_id":"...","_index":"..."}}: the id is the value between the quotes after _id.
      String action = lines[i];
      int at = action.indexOf("\"_id\":\"") + 7;
      String id = action.substring(at, action.indexOf('"', at));
      if (items.length() > 0) {
        items.append(',');
      }
      if (refuse) {
        items.append("{\"index\":{\"_index\":\"retry\",\"_id\":\"").append(id)
            .append("\",\"status\":429,\"error\":{\"type\":\"es_rejected_execution_exception\","
                + "\"reason\":\"rejected execution: the write queue is full\"}}}");
      } else {
        indexed.add(id);
        items.append("{\"index\":{\"_index\":\"retry\",\"_id\":\"").append(id)
            .append("\",\"_version\":1,\"result\":\"created\",\"status\":201,"
                + "\"_seq_no\":0,\"_primary_term\":1,"
                + "\"_shards\":{\"total\":1,\"successful\":1,\"failed\":0}}}");
      }
    }
    byte[] out = ("{\"took\":1,\"errors\":" + refuse + ",\"items\":[" + items + "]}")
        .getBytes(StandardCharsets.UTF_8);
    x.getResponseHeaders().add("Content-Type", "application/json");
    // elasticsearch-java refuses a response without it (ElasticsearchTransportBase.checkProductHeader).
    x.getResponseHeaders().add("X-Elastic-Product", "Elasticsearch");
    x.sendResponseHeaders(200, out.length);
    try (OutputStream o = x.getResponseBody()) {
      o.write(out);
    }
  }
}
