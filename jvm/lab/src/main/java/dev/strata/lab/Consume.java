package dev.strata.lab;

import java.time.Duration;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * A consumer reading everything the topic receives, as the pipeline's job does: in the consumer
 * group named after the pipeline, committing its offsets, fetching from each partition's leader
 * (Kafka's default; no rack-aware follower fetching). What it reads is the consumer read rate C
 * of the plan's bandwidth model.
 */
final class Consume {
  private Consume() {}

  static void main(String[] args) throws Exception {
    if (args.length != 3) {
      throw new IllegalArgumentException("consume <bootstrap> <topic> <group>");
    }
    Properties p = new Properties();
    p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, args[0]);
    p.put(ConsumerConfig.GROUP_ID_CONFIG, args[2]);
    p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "true");
    p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
    p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
    AtomicBoolean stopping = new AtomicBoolean();
    try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(p)) {
      Thread main = Thread.currentThread();
      Runtime.getRuntime().addShutdownHook(new Thread(() -> {
        stopping.set(true);
        consumer.wakeup();
        try {
          main.join(10_000);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }, "lab-consumer-close"));
      consumer.subscribe(List.of(args[1]));
      System.out.println("lab: consuming " + args[1] + " as group " + args[2]);
      long bytes = 0;
      long reported = System.nanoTime();
      while (!stopping.get()) {
        ConsumerRecords<byte[], byte[]> records;
        try {
          records = consumer.poll(Duration.ofMillis(500));
        } catch (WakeupException e) {
          break;
        }
        for (ConsumerRecord<byte[], byte[]> r : records) {
          bytes += r.serializedValueSize() + Math.max(0, r.serializedKeySize());
        }
        if (System.nanoTime() - reported > 10_000_000_000L) {
          System.out.println("lab: consumed " + bytes + " bytes");
          reported = System.nanoTime();
        }
      }
    }
  }
}
