package dev.strata.ingest;

import java.util.List;
import java.util.Map;
import org.apache.spark.SparkContext;
import org.apache.spark.api.java.function.VoidFunction2;
import org.apache.spark.metrics.source.LongAccumulatorSource$;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.util.LongAccumulator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The query's foreachBatch: each micro-batch is written by its partitions in one Spark job (one
 * read of the batch's Kafka records, no second read to count or to find offsets), then the
 * consumed offsets are committed to the pipeline's consumer group. Runs on the driver.
 *
 * <p>The documents and dead letters written are counted in two accumulators, which Spark's metrics
 * system serves (LongAccumulatorSource: {@code <namespace>.AccumulatorSource.strata_documents} and
 * {@code strata_deadLetters} on the driver's Prometheus endpoint).
 */
final class BatchSink implements VoidFunction2<Dataset<Row>, Long>, AutoCloseable {
  private static final long serialVersionUID = 1L;
  private static final Logger LOG = LoggerFactory.getLogger(BatchSink.class);

  static final String DOCUMENTS = "strata_documents";
  static final String DEAD_LETTERS = "strata_deadLetters";

  private final IngestConf conf;
  private final LongAccumulator documents;
  private final LongAccumulator deadLetters;
  private transient OffsetCommitter committer;

  BatchSink(IngestConf conf, SparkContext sc) {
    this.conf = conf;
    this.documents = sc.longAccumulator(DOCUMENTS);
    this.deadLetters = sc.longAccumulator(DEAD_LETTERS);
    LongAccumulatorSource$.MODULE$.register(sc, scala.collection.immutable.Map.from(
        scala.jdk.javaapi.CollectionConverters.asScala(
            Map.of(DOCUMENTS, documents, DEAD_LETTERS, deadLetters))));
  }

  @Override
  public void call(Dataset<Row> batch, Long batchId) {
    List<PartitionWriter.Summary> parts =
        batch.javaRDD().mapPartitions(new PartitionWriter(conf)).collect();
    PartitionWriter.Summary total = PartitionWriter.Summary.empty();
    for (PartitionWriter.Summary s : parts) {
      total = total.plus(s);
    }
    // Counted on the driver from the committed job's results: a retried task counts once.
    documents.add(total.documents());
    deadLetters.add(total.deadLetters());
    if (total.deadLetters() > 0) {
      LOG.warn("batch {}: {} records to the dead-letter index {}", batchId, total.deadLetters(),
          conf.esDeadLetterIndex());
    }
    LOG.info("batch {}: {} documents, {} dead letters, last offsets {}", batchId,
        total.documents(), total.deadLetters(), total.lastOffsets());
    if (committer == null) {
      committer = new OffsetCommitter(conf);
    }
    committer.commit(total.lastOffsets());
  }

  long documents() {
    return documents.value();
  }

  long deadLetters() {
    return deadLetters.value();
  }

  @Override
  public void close() {
    if (committer != null) {
      committer.close();
      committer = null;
    }
  }
}
