package dev.strata.lab;

import java.util.Arrays;

/**
 * The launcher's entry point: {@code broker <server.properties> <cluster id> <metrics port>
 * <metrics rules>}, {@code produce <bootstrap> <topic> <partitions> <replication factor> <bytes per second> <record bytes> [brokers]}
 * {@code consume <bootstrap> <topic> <group>}
 * or {@code search <home> <cluster name> <node name> <http port> <write threads> <write queue>}.
 * Each mode runs until the process is stopped (the Go side sends SIGTERM, or SIGKILL to stop a
 * broker the hard way).
 */
public final class Lab {
  private Lab() {}

  public static void main(String[] args) throws Exception {
    if (args.length == 0) {
      usage();
    }
    String[] rest = Arrays.copyOfRange(args, 1, args.length);
    switch (args[0]) {
      case "broker":
        Broker.main(rest);
        break;
      case "produce":
        Produce.main(rest);
        break;
      case "consume":
        Consume.main(rest);
        break;
      case "search":
        Search.main(rest);
        break;
      default:
        usage();
    }
  }

  private static void usage() {
    System.err.println("usage: broker <server.properties> <cluster id> <metrics port> <metrics rules>");
    System.err.println("       produce <bootstrap> <topic> <partitions> <replication factor> <bytes per second> <record bytes> [brokers]");
    System.err.println("       consume <bootstrap> <topic> <group>");
    System.err.println("       search <home> <cluster name> <node name> <http port> <write threads> <write queue>");
    System.exit(2);
  }
}
