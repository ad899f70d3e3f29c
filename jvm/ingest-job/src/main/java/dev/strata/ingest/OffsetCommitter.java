package dev.strata.ingest;

import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Commits, after each micro-batch, the offsets the job has consumed to the Kafka consumer group
 * named after the pipeline, so that lag exporters (kafka_exporter's kafka_consumergroup_lag) and
 * the autoscaler see the job's progress. Spark's Kafka source commits nothing itself: it keeps
 * its offsets in the checkpoint, which stays the source of truth (a restart reads the checkpoint,
 * never this group). Spark reads with a generated group of its own, so this group has no members
 * and AdminClient.alterConsumerGroupOffsets may set it.
 *
 * <p>A failed commit is logged and the job goes on: it only delays the lag series.
 */
final class OffsetCommitter implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(OffsetCommitter.class);

  private final String group;
  private final Admin admin;

  OffsetCommitter(IngestConf conf) {
    this.group = conf.consumerGroup();
    Map<String, Object> props = new HashMap<>(KafkaSettings.client(conf));
    props.put("client.id", "strata-ingest-" + conf.pipeline() + "-offsets");
    this.admin = Admin.create(props);
  }

  /**
   * Commits the next offset to read of each Kafka partition (the last offset read + 1, as a
   * consumer commits), from lastOffsets keyed by PartitionWriter.Summary.key.
   */
  void commit(Map<String, Long> lastOffsets) {
    if (lastOffsets.isEmpty()) {
      return;
    }
    Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
    lastOffsets.forEach((k, v) -> {
      int slash = k.indexOf('/');
      offsets.put(new TopicPartition(k.substring(slash + 1), Integer.parseInt(k.substring(0, slash))),
          new OffsetAndMetadata(v + 1));
    });
    try {
      admin.alterConsumerGroupOffsets(group, offsets).all().get(30, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (Exception e) {
      LOG.warn("cannot commit offsets {} to the consumer group {} (lag monitoring only): {}",
          offsets, group, e.toString());
    }
  }

  @Override
  public void close() {
    admin.close();
  }
}
