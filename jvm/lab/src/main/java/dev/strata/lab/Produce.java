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
 * A producer writing about a fixed number of bytes per second (record values of random bytes,
 * which compression cannot shrink) to a topic, with acks=all as the pipeline's producers are
 * expected to: every record is replicated before it counts, so the brokers' replication traffic
 * is what the plan's model predicts. It creates the topic first when missing, retrying until
 * enough brokers have registered for its replication factor.
 */
final class Produce {
  private Produce() {}

  static void main(String[] args) throws Exception {
    if (args.length != 6) {
      throw new IllegalArgumentException(
          "produce <bootstrap> <topic> <partitions> <replication factor> <bytes per second> <record bytes>");
    }
    String topic = args[1];
    int partitions = Integer.parseInt(args[2]);
    short replicationFactor = Short.parseShort(args[3]);
    long bytesPerSecond = Long.parseLong(args[4]);
    int recordBytes = Integer.parseInt(args[5]);
    createTopic(args[0], new NewTopic(topic, Optional.of(partitions), Optional.of(replicationFactor)));
    Properties p = new Properties();
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, args[0]);
    p.put(ProducerConfig.ACKS_CONFIG, "all");
    p.put(ProducerConfig.LINGER_MS_CONFIG, "5");
    p.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, "none");
    p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
    p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
    byte[] value = new byte[recordBytes];
    new Random(1).nextBytes(value);
    long perTick = Math.max(1, bytesPerSecond / 10 / recordBytes); // records per 100 ms
    try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p)) {
      Runtime.getRuntime().addShutdownHook(new Thread(producer::close, "lab-producer-close"));
      System.out.println("lab: producing " + bytesPerSecond + " B/s to " + topic);
      long next = System.nanoTime();
      while (true) {
        try {
          for (long i = 0; i < perTick; i++) {
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

  private static void createTopic(String bootstrap, NewTopic topic) throws Exception {
    Properties p = new Properties();
    p.put("bootstrap.servers", bootstrap);
    try (Admin admin = Admin.create(p)) {
      for (int attempt = 0; ; attempt++) {
        try {
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
