package dev.strata.ingest;

import java.util.function.UnaryOperator;

/**
 * The environment the job reads its credentials from: the variables the operator fills from
 * Secrets (secretKeyRef in the driver's and the executors' pod templates), named by the
 * spark.strata.*Env keys. A credential is never a Spark setting: Spark shows its settings in the
 * UI and the event log.
 */
final class Env {
  /** How a variable is looked up: the process environment; the tests give their own. */
  static volatile UnaryOperator<String> lookup = System::getenv;

  private Env() {}

  /** The value of the variable name, which key names; refuses a missing or empty one. */
  static String require(String name, String key) {
    String v = lookup.apply(name);
    if (v == null || v.isEmpty()) {
      throw new IllegalArgumentException(key + ": the environment variable " + name + " is not set");
    }
    return v;
  }
}
