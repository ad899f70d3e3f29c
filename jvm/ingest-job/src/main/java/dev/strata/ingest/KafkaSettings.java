package dev.strata.ingest;

import java.util.HashMap;
import java.util.Map;

/** How the job reaches Kafka: the source's options and the admin client's settings. */
final class KafkaSettings {
  private KafkaSettings() {}

  /**
   * Client settings shared by the source's consumers and the offset committer: the bootstrap
   * servers and, when the operator gives the job a KafkaUser, SCRAM-SHA-512 (Strimzi's scram-sha-512
   * listener authentication, on the plain listener: SASL_PLAINTEXT) with the sasl.jaas.config
   * from the environment variable the key names. The admin client that commits the offsets uses
   * the same settings, so the KafkaUser's ACLs cover everything the job does in Kafka.
   */
  static Map<String, String> client(IngestConf conf) {
    Map<String, String> m = new HashMap<>();
    m.put("bootstrap.servers", conf.kafkaBootstrap());
    if (conf.kafkaSaslJaasConfigEnv() != null) {
      // The JAAS line of the User Operator's Secret (its key sasl.jaas.config): ScramLoginModule
      // with the KafkaUser's name and password.
      String jaas = Env.require(conf.kafkaSaslJaasConfigEnv(), IngestConf.KAFKA_JAAS_ENV);
      m.put("security.protocol", "SASL_PLAINTEXT");
      m.put("sasl.mechanism", "SCRAM-SHA-512");
      m.put("sasl.jaas.config", jaas);
    }
    return m;
  }

  /**
   * The Kafka source's options (Spark's "Structured Streaming + Kafka Integration Guide"): the
   * topic from the earliest offset on a first start (later starts resume from the checkpoint),
   * at most maxOffsetsPerTrigger records per micro-batch, split into at least minPartitions
   * Spark partitions (the plan sets it to the executors' cores, so every core works).
   */
  static Map<String, String> source(IngestConf conf) {
    Map<String, String> m = new HashMap<>();
    client(conf).forEach((k, v) -> m.put("kafka." + k, v));
    m.put("subscribe", conf.kafkaTopic());
    m.put("startingOffsets", "earliest");
    m.put("maxOffsetsPerTrigger", String.valueOf(conf.maxOffsetsPerTrigger()));
    m.put("minPartitions", String.valueOf(conf.minPartitions()));
    // Records Kafka's retention deleted before the job read them are gone either way; failing
    // the query for it would stop the pipeline until someone deletes the checkpoint. Spark logs
    // the loss as a warning.
    m.put("failOnDataLoss", "false");
    return m;
  }
}
