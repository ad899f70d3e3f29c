package dev.strata.ingest;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;

/**
 * Test only: the Kafka ACLs a Strimzi KafkaUser (kafka.strimzi.io/v1) grants, as the User
 * Operator creates them (strimzi-kafka-operator 1.2.0, user-operator/.../model/acl/
 * SimpleAclRule.java: toKafkaAclBinding): principal User:&lt;name&gt;, each rule's resource with its
 * pattern type (literal by default), each operation, the host ("*" by default), allow or deny.
 */
final class KafkaUserAcls {
  private KafkaUserAcls() {}

  static List<AclBinding> from(Path kafkaUserYaml) throws IOException {
    JsonNode user = new YAMLMapper().readTree(kafkaUserYaml.toFile());
    String principal = "User:" + user.path("metadata").path("name").asText();
    List<AclBinding> out = new ArrayList<>();
    for (JsonNode rule : user.path("spec").path("authorization").path("acls")) {
      JsonNode r = rule.path("resource");
      ResourcePattern pattern = new ResourcePattern(
          ResourceType.fromString(r.path("type").asText()),
          r.path("name").asText(),
          "prefix".equals(r.path("patternType").asText()) ? PatternType.PREFIXED : PatternType.LITERAL);
      AclPermissionType permission = "deny".equals(rule.path("type").asText())
          ? AclPermissionType.DENY : AclPermissionType.ALLOW;
      for (JsonNode op : rule.path("operations")) {
        out.add(new AclBinding(pattern, new AccessControlEntry(principal,
            rule.path("host").asText("*"), AclOperation.fromString(op.asText().toUpperCase(Locale.ROOT)),
            permission)));
      }
    }
    if (out.isEmpty()) {
      throw new IllegalStateException(kafkaUserYaml + ": no ACLs");
    }
    return out;
  }
}
