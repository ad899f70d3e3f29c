package dev.strata.ingest;

import java.io.IOException;
import java.io.PrintStream;
import java.io.OutputStream;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import kafka.server.KafkaConfig;
import kafka.server.KafkaRaftServer;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.ScramCredentialInfo;
import org.apache.kafka.clients.admin.ScramMechanism;
import org.apache.kafka.clients.admin.UserScramCredentialUpsertion;
import org.apache.kafka.common.acl.AclBinding;
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
 *
 * <p>With {@code secure}, as the operator's Kafka: a second listener, SASL_PLAINTEXT with
 * SCRAM-SHA-512 (Strimzi's {@code authentication: {type: scram-sha-512}} on the plain listener),
 * and Kafka's StandardAuthorizer (Strimzi's {@code authorization: {type: simple}} in KRaft
 * mode), so that a principal can do exactly what its ACLs allow. The unauthenticated PLAINTEXT
 * and CONTROLLER listeners stay for the broker itself and the tests' own clients (ANONYMOUS,
 * made a super user, as Strimzi makes its own components' principals super users).
 */
final class EmbeddedKafka implements AutoCloseable {
  private final KafkaRaftServer server;
  private final String bootstrap;
  private final String saslBootstrap;

  EmbeddedKafka(Path dir) throws Exception {
    this(dir, false);
  }

  EmbeddedKafka(Path dir, boolean secure) throws Exception {
    int brokerPort = freePort();
    int controllerPort = freePort();
    int saslPort = secure ? freePort() : 0;
    Path logs = Files.createDirectories(dir.resolve("kafka-logs"));
    Properties p = new Properties();
    p.put("process.roles", "broker,controller");
    p.put("node.id", "1");
    p.put("controller.quorum.voters", "1@127.0.0.1:" + controllerPort);
    p.put("listeners", "PLAINTEXT://127.0.0.1:" + brokerPort + ",CONTROLLER://127.0.0.1:" + controllerPort
        + (secure ? ",SASL://127.0.0.1:" + saslPort : ""));
    p.put("advertised.listeners", "PLAINTEXT://127.0.0.1:" + brokerPort
        + (secure ? ",SASL://127.0.0.1:" + saslPort : ""));
    p.put("controller.listener.names", "CONTROLLER");
    p.put("listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT"
        + (secure ? ",SASL:SASL_PLAINTEXT" : ""));
    if (secure) {
      p.put("sasl.enabled.mechanisms", "SCRAM-SHA-512");
      p.put("listener.name.sasl.scram-sha-512.sasl.jaas.config",
          "org.apache.kafka.common.security.scram.ScramLoginModule required;");
      p.put("authorizer.class.name", "org.apache.kafka.metadata.authorizer.StandardAuthorizer");
      p.put("super.users", "User:ANONYMOUS");
    }
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
    saslBootstrap = secure ? "127.0.0.1:" + saslPort : null;
  }

  /** The unauthenticated listener: the tests' own clients, with every right. */
  String bootstrap() {
    return bootstrap;
  }

  /** The SCRAM-SHA-512 listener (secure brokers only). */
  String saslBootstrap() {
    return saslBootstrap;
  }

  /** The JAAS line a SCRAM client of user gives as sasl.jaas.config, as Strimzi's User Operator
   * writes it into the KafkaUser's Secret (KafkaUserModel.getSaslJsonConfig). */
  static String jaas(String user, String password) {
    return "org.apache.kafka.common.security.scram.ScramLoginModule required username=\"" + user
        + "\" password=\"" + password + "\";";
  }

  /**
   * Creates user's SCRAM-SHA-512 credential through the Admin API (what Strimzi's User Operator
   * does for a scram-sha-512 KafkaUser: ScramShaCredentialsBatchReconciler) and waits until the
   * broker authenticates it.
   */
  void createScramUser(String user, String password) throws Exception {
    try (Admin a = admin()) {
      a.alterUserScramCredentials(List.of(new UserScramCredentialUpsertion(user,
          new ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, 4096), password))).all().get();
      long deadline = System.currentTimeMillis() + 30_000;
      while (a.describeUserScramCredentials(List.of(user)).all().get().isEmpty()
          && System.currentTimeMillis() < deadline) {
        Thread.sleep(50);
      }
    }
  }

  /** Creates ACLs (the User Operator's SimpleAclOperator does the same for a KafkaUser). */
  void createAcls(List<AclBinding> acls) throws Exception {
    try (Admin a = admin()) {
      a.createAcls(acls).all().get();
    }
  }

  /** An admin client on the SCRAM listener as user. */
  Admin adminAs(String user, String password) {
    Map<String, Object> conf = new HashMap<>();
    conf.put("bootstrap.servers", saslBootstrap);
    conf.put("security.protocol", "SASL_PLAINTEXT");
    conf.put("sasl.mechanism", "SCRAM-SHA-512");
    conf.put("sasl.jaas.config", jaas(user, password));
    return Admin.create(conf);
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
