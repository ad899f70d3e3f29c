package dev.strata.lab;

import java.util.List;
import java.util.Optional;
import java.util.Properties;
import java.util.Random;
import java.util.concurrent.ExecutionException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * A producer writing about a fixed number of bytes per second (JSON objects of exactly the record
 * size, uncompressed, which the pipeline's job indexes as they are) to a topic, with acks=all as the pipeline's producers are
 * expected to: every record is replicated before it counts, so the brokers' replication traffic
 * is what the plan's model predicts. It creates the topic first when missing, retrying until
 * enough brokers have registered for its replication factor.
 */
final class Produce {
  private Produce() {}

  static void main(String[] args) throws Exception {
    if (args.length != 6 && args.length != 7) {
      throw new IllegalArgumentException(
          "produce <bootstrap> <topic> <partitions> <replication factor> <bytes per second> <record bytes> [brokers]");
    }
    String topic = args[1];
    int partitions = Integer.parseInt(args[2]);
    short replicationFactor = Short.parseShort(args[3]);
    long bytesPerSecond = Long.parseLong(args[4]);
    int recordBytes = Integer.parseInt(args[5]);
    // Kafka places a new topic's replicas on the brokers registered at that moment: wait for all
    // of them, or a broker that started late holds none of the topic.
    int brokers = args.length == 7 ? Integer.parseInt(args[6]) : replicationFactor;
    createTopic(args[0], new NewTopic(topic, Optional.of(partitions), Optional.of(replicationFactor)), brokers);
    Properties p = new Properties();
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, args[0]);
    p.put(ProducerConfig.ACKS_CONFIG, "all");
    p.put(ProducerConfig.LINGER_MS_CONFIG, "20");
    // Batches of many records, as a producer tuned for throughput sends (the default 16 KiB
    // batch holds one of the study's 9 KB records).
    p.put(ProducerConfig.BATCH_SIZE_CONFIG, Integer.toString(Math.max(16384, 32 * recordBytes)));
    p.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, "none");
    p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
    p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
    byte[] value = jsonRecord(recordBytes, new Random(1));
    // Records per 100 ms, the fraction carried over: 488 records/s is 48.8 a tick, not 48.
    double perTick = (double) bytesPerSecond / 10 / recordBytes;
    double owed = 0;
    try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p)) {
      Runtime.getRuntime().addShutdownHook(new Thread(producer::close, "lab-producer-close"));
      System.out.println("lab: producing " + bytesPerSecond + " B/s to " + topic);
      long next = System.nanoTime();
      while (true) {
        try {
          owed += perTick;
          for (; owed >= 1; owed--) {
            producer.send(new ProducerRecord<>(topic, value));
          }
        } catch (IllegalStateException closed) {
          return; // the shutdown hook closed the producer: the process is stopping
        }
        next += 100_000_000L;
        long wait = next - System.nanoTime();
        if (wait > 0) {
          Thread.sleep(wait / 1_000_000L, (int) (wait % 1_000_000L));
        }
      }
    }
  }

  /**
   * A JSON object of exactly bytes bytes (at least its braces and one field): the job's default
   * record format (spark.strata.record.format json) indexes it as a document, where random bytes
   * would all become dead letters.
   */
  static byte[] jsonRecord(int bytes, Random random) {
    String head = "{\"pad\":\"";
    String tail = "\"}";
    String alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    StringBuilder b = new StringBuilder(head);
    for (int i = head.length() + tail.length(); i < bytes; i++) {
      b.append(alphabet.charAt(random.nextInt(alphabet.length())));
    }
    return b.append(tail).toString().getBytes(java.nio.charset.StandardCharsets.US_ASCII);
  }

  private static void createTopic(String bootstrap, NewTopic topic, int brokers) throws Exception {
    Properties p = new Properties();
    p.put("bootstrap.servers", bootstrap);
    try (Admin admin = Admin.create(p)) {
      for (int attempt = 0; ; attempt++) {
        try {
          int registered = admin.describeCluster().nodes().get().size();
          if (registered < brokers) {
            if (attempt >= 120) {
              throw new IllegalStateException(registered + " of " + brokers + " brokers registered");
            }
            Thread.sleep(500);
            continue;
          }
          admin.createTopics(List.of(topic)).all().get();
          return;
        } catch (ExecutionException e) {
          if (e.getCause() instanceof TopicExistsException) {
            return;
          }
          if (attempt >= 120) {
            throw e;
          }
          Thread.sleep(500);
        }
      }
    }
  }
}
