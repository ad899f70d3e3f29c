package dev.strata.ingest;

import java.io.IOException;
import java.io.PrintStream;
import java.io.OutputStream;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import kafka.server.KafkaConfig;
import kafka.server.KafkaRaftServer;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.metadata.storage.Formatter;
import org.apache.kafka.server.common.MetadataVersion;

/**
 * A real Kafka broker in KRaft mode (one process that is both broker and controller, as
 * Kafka's config/kraft/server.properties), in the test JVM, from the Maven Central jars
 * (org.apache.kafka:kafka_2.13 at the kafka-clients version Spark's Kafka source is built with).
 * The log directory is formatted as kafka-storage.sh format does (Kafka 3.9 StorageTool uses the
 * same Formatter).
 */
final class EmbeddedKafka implements AutoCloseable {
  private final KafkaRaftServer server;
  private final String bootstrap;

  EmbeddedKafka(Path dir) throws Exception {
    int brokerPort = freePort();
    int controllerPort = freePort();
    Path logs = Files.createDirectories(dir.resolve("kafka-logs"));
    Properties p = new Properties();
    p.put("process.roles", "broker,controller");
    p.put("node.id", "1");
    p.put("controller.quorum.voters", "1@127.0.0.1:" + controllerPort);
    p.put("listeners", "PLAINTEXT://127.0.0.1:" + brokerPort + ",CONTROLLER://127.0.0.1:" + controllerPort);
    p.put("advertised.listeners", "PLAINTEXT://127.0.0.1:" + brokerPort);
    p.put("controller.listener.names", "CONTROLLER");
    p.put("listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT");
    p.put("inter.broker.listener.name", "PLAINTEXT");
    p.put("log.dirs", logs.toString());
    p.put("offsets.topic.replication.factor", "1");
    p.put("offsets.topic.num.partitions", "1");
    p.put("transaction.state.log.replication.factor", "1");
    p.put("transaction.state.log.min.isr", "1");
    p.put("group.initial.rebalance.delay.ms", "0");
    p.put("num.network.threads", "1");
    p.put("num.io.threads", "2");
    p.put("log.flush.interval.messages", "1000000");
    KafkaConfig config = KafkaConfig.fromProps(p);
    new Formatter()
        .setPrintStream(new PrintStream(OutputStream.nullOutputStream()))
        .setNodeId(1)
        .setClusterId(Uuid.randomUuid().toString())
        .setControllerListenerName("CONTROLLER")
        .setMetadataLogDirectory(logs.toString())
        .setDirectories(java.util.List.of(logs.toString()))
        .setReleaseVersion(MetadataVersion.LATEST_PRODUCTION)
        .run();
    server = new KafkaRaftServer(config, Time.SYSTEM);
    server.startup();
    bootstrap = "127.0.0.1:" + brokerPort;
  }

  String bootstrap() {
    return bootstrap;
  }

  Admin admin() {
    Map<String, Object> conf = new HashMap<>();
    conf.put("bootstrap.servers", bootstrap);
    return Admin.create(conf);
  }

  void createTopic(String name, int partitions) throws Exception {
    try (Admin a = admin()) {
      a.createTopics(java.util.List.of(new NewTopic(name, Optional.of(partitions), Optional.empty())))
          .all().get();
    }
  }

  @Override
  public void close() {
    server.shutdown();
    server.awaitShutdown();
  }

  static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    }
  }
}
