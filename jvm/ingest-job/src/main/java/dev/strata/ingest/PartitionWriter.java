package dev.strata.ingest;

import co.elastic.clients.elasticsearch.ElasticsearchClient;
import co.elastic.clients.elasticsearch._types.ElasticsearchException;
import co.elastic.clients.elasticsearch._helpers.bulk.BulkIngester;
import co.elastic.clients.elasticsearch._helpers.bulk.BulkListener;
import co.elastic.clients.elasticsearch.core.BulkRequest;
import co.elastic.clients.elasticsearch.core.BulkResponse;
import co.elastic.clients.elasticsearch.core.bulk.BulkOperation;
import co.elastic.clients.elasticsearch.core.bulk.BulkResponseItem;
import co.elastic.clients.transport.TransportException;
import co.elastic.clients.util.ContentType;
import co.elastic.clients.util.BinaryData;
import java.io.Serializable;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.apache.spark.api.java.function.FlatMapFunction;
import org.apache.spark.sql.Row;

/**
 * Writes one Spark partition of a micro-batch (a slice of one Kafka partition's records) into
 * Elasticsearch with the official client's BulkIngester, and returns what it did: how many
 * documents and dead letters, and the highest offset it read of each Kafka partition. The rows are
 * read once, as they stream from Kafka; nothing is collected to the driver but that summary.
 *
 * <p>A document Elasticsearch refuses for its content (status 400: a mapping conflict, say) becomes
 * a dead letter with Elasticsearch's reason. Any other failure (after Bulk's retries of what a
 * full write queue refused) fails the task, and Spark retries it: the ids are deterministic, so
 * the retry overwrites what the failed attempt wrote.
 */
final class PartitionWriter implements FlatMapFunction<Iterator<Row>, PartitionWriter.Summary> {
  private static final long serialVersionUID = 1L;

  private final IngestConf conf;
  private final Supplier<ElasticsearchClient> clients;

  PartitionWriter(IngestConf conf) {
    this(conf, (Supplier<ElasticsearchClient> & Serializable) () -> EsClients.shared(conf));
  }

  PartitionWriter(IngestConf conf, Supplier<ElasticsearchClient> clients) {
    this.conf = conf;
    this.clients = clients;
  }

  /** What one partition wrote; merged on the driver. */
  record Summary(long documents, long deadLetters, Map<String, Long> lastOffsets)
      implements Serializable {
    /** The key of a Kafka partition in lastOffsets. */
    static String key(String topic, int partition) {
      return partition + "/" + topic;
    }

    static Summary empty() {
      return new Summary(0, 0, Map.of());
    }

    Summary plus(Summary o) {
      Map<String, Long> m = new HashMap<>(lastOffsets);
      o.lastOffsets.forEach((k, v) -> m.merge(k, v, Math::max));
      return new Summary(documents + o.documents, deadLetters + o.deadLetters, m);
    }
  }

  /** A document on its way, with what is needed to make it a dead letter if it is refused. */
  private record Pending(String topic, int partition, long offset, long time, String source,
      String reason) {
    Pending(String topic, int partition, long offset, long time, String source) {
      this(topic, partition, offset, time, source, null);
    }

    Pending withReason(String r) {
      return new Pending(topic, partition, offset, time, source, r);
    }
  }

  @Override
  public Iterator<Summary> call(Iterator<Row> rows) throws Exception {
    if (!rows.hasNext()) {
      return List.<Summary>of().iterator();
    }
    RecordConverter converter = RecordConverter.of(conf);
    Map<String, Long> last = new HashMap<>();
    long documents = 0;
    long deadLetters = 0;
    Bulk bulk = new Bulk(clients.get(), conf);
    List<Pending> refused;
    try {
      while (rows.hasNext()) {
        Row r = rows.next();
        String topic = r.getString(0);
        int partition = r.getInt(1);
        long offset = r.getLong(2);
        byte[] value = r.isNullAt(3) ? null : (byte[]) r.get(3);
        long time = r.isNullAt(4) ? 0L : r.getTimestamp(4).getTime();
        RecordConverter.Result res = converter.convert(topic, partition, offset, value, time);
        last.merge(Summary.key(topic, partition), offset, Math::max);
        if (res.deadLetter()) {
          deadLetters++;
          bulk.add(conf.esDeadLetterIndex(), res, new Pending(topic, partition, offset, time, null));
        } else {
          documents++;
          bulk.add(conf.esIndex(), res, new Pending(topic, partition, offset, time, res.source()));
        }
      }
    } finally {
      refused = bulk.close();
    }
    if (!refused.isEmpty()) {
      Bulk again = new Bulk(clients.get(), conf);
      try {
        for (Pending p : refused) {
          again.add(conf.esDeadLetterIndex(), RecordConverter.rejected(p.topic(), p.partition(),
              p.offset(), p.source(), p.reason(), p.time()), p);
        }
      } finally {
        if (!again.close().isEmpty()) {
          throw new IllegalStateException("Elasticsearch refused dead letters in "
              + conf.esDeadLetterIndex());
        }
      }
      documents -= refused.size();
      deadLetters += refused.size();
    }
    return List.of(new Summary(documents, deadLetters, last)).iterator();
  }

  /**
   * The partition's bulk requests and what their responses said. Operations a full write queue
   * refused (429, for an item or for the whole request) are sent again after a wait, doubling
   * from 0.1 s over 7 rounds (12.7 s in all); what is still refused then fails the task.
   *
   * <p>Not BulkIngester's own backoffPolicy: with it (elasticsearch-java 8.19.0) two bulks refused
   * in a row, as a full queue answers them at once, can leave the ingester counting a request in
   * flight that none is, and the task waits forever (PartitionWriterRetryTest hung so): the job
   * stops committing without failing, as the lab's once did after a saturated search node. Each
   * round here is a plain ingester, closed before the next one starts, on the path BulkIngester
   * took before it had retries.
   */
  private static final class Bulk implements BulkListener<Bulk.Op> {
    static final long FIRST_WAIT_MILLIS = 100;
    static final int ROUNDS = 7;
    static final int TOO_MANY_REQUESTS = 429;

    /** An operation as sent, kept to be sent again. */
    record Op(BulkOperation operation, Pending pending) {}

    private final ElasticsearchClient es;
    private final IngestConf conf;
    private BulkIngester<Op> ingester;
    private final List<Pending> refused = new ArrayList<>();
    private final List<String> failures = new ArrayList<>();
    private List<Op> throttled = new ArrayList<>();
    private String lastThrottle;

    Bulk(ElasticsearchClient es, IngestConf conf) {
      this.es = es;
      this.conf = conf;
      ingester = open();
    }

    private BulkIngester<Op> open() {
      return BulkIngester.of(b -> b.client(es)
          .maxOperations(conf.bulkActions())
          .maxSize(conf.bulkBytes())
          // One request in flight while the next is filled; more would only queue on the
          // data nodes' write thread pool.
          .maxConcurrentRequests(1)
          .listener(this));
    }

    void add(String index, RecordConverter.Result res, Pending p) {
      byte[] body = res.source().getBytes(StandardCharsets.UTF_8);
      BulkOperation op = BulkOperation.of(o -> o.index(i -> i.index(index).id(res.id())
          .document(BinaryData.of(body, ContentType.APPLICATION_JSON))));
      ingester.add(op, new Op(op, p));
    }

    /**
     * Flushes, sends what was refused with 429 again until it is taken or the rounds are over,
     * and returns the documents refused for their content; throws on failures.
     */
    List<Pending> close() throws InterruptedException {
      ingester.close();
      long wait = FIRST_WAIT_MILLIS;
      for (int round = 1; ; round++) {
        List<Op> again;
        synchronized (this) {
          if (!failures.isEmpty()) {
            throw new IllegalStateException("bulk indexing failed (" + failures.size()
                + " failures), first: " + failures.get(0));
          }
          if (throttled.isEmpty()) {
            return refused;
          }
          if (round > ROUNDS) {
            throw new IllegalStateException("bulk indexing failed: " + throttled.size()
                + " operations still refused (" + TOO_MANY_REQUESTS + ") after " + ROUNDS
                + " retries, last: " + lastThrottle);
          }
          again = throttled;
          throttled = new ArrayList<>();
        }
        Thread.sleep(wait);
        wait *= 2;
        ingester = open();
        for (Op o : again) {
          ingester.add(o.operation(), o);
        }
        ingester.close();
      }
    }

    @Override
    public void beforeBulk(long id, BulkRequest request, List<Op> contexts) {}

    @Override
    public synchronized void afterBulk(long id, BulkRequest request, List<Op> contexts,
        BulkResponse response) {
      if (!response.errors()) {
        return;
      }
      List<BulkResponseItem> items = response.items();
      for (int i = 0; i < items.size(); i++) {
        BulkResponseItem item = items.get(i);
        if (item.error() == null) {
          continue;
        }
        Op op = contexts.get(i);
        String reason = item.error().type() + ": " + item.error().reason();
        if (item.status() == TOO_MANY_REQUESTS) {
          throttled.add(op);
          lastThrottle = reason;
        } else if (item.status() == 400 && op.pending().source() != null) {
          refused.add(op.pending().withReason(reason));
        } else {
          failures.add(item.index() + "/" + item.id() + " (" + item.status() + ") " + reason);
        }
      }
    }

    @Override
    public synchronized void afterBulk(long id, BulkRequest request, List<Op> contexts,
        Throwable failure) {
      if (status(failure) == TOO_MANY_REQUESTS) {
        throttled.addAll(contexts);
        lastThrottle = String.valueOf(failure);
      } else {
        failures.add(String.valueOf(failure));
      }
    }

    /** The HTTP status a failed request was answered with, or 0. */
    private static int status(Throwable t) {
      for (; t != null; t = t.getCause()) {
        if (t instanceof ElasticsearchException e) {
          return e.status();
        }
        if (t instanceof TransportException e) {
          return e.statusCode();
        }
      }
      return 0;
    }
  }
}
