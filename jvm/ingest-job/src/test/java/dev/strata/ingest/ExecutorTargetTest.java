package dev.strata.ingest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class ExecutorTargetTest {

  private record Case(String name, int target, List<String> live, Set<String> busy, int requested,
      int wantTotal, List<String> wantKill) {}

  @Test
  void decide() {
    Case[] cases = {
        new Case("at the target: nothing", 3, List.of("1", "2", "3"), Set.of(), 3, -1, List.of()),
        new Case("executors still starting: nothing more", 3, List.of("1"), Set.of(), 3, -1, List.of()),
        new Case("up: the total only", 5, List.of("1", "2", "3"), Set.of("1"), 3, 5, List.of()),
        new Case("down: the newest idle leave", 1, List.of("1", "2", "3"), Set.of(), 3, 1, List.of("3", "2")),
        new Case("down: idle before busy", 2, List.of("1", "2", "3", "4"), Set.of("4", "2"), 4, 2,
            List.of("3", "1")),
        new Case("down: busy when too few are idle", 1, List.of("1", "2", "3"), Set.of("1", "3"), 3, 1,
            List.of("2", "3")),
        new Case("down while some start: pending ones cancelled, none killed", 2, List.of("1", "2"), Set.of(), 4, 2,
            List.of()),
        new Case("more running than asked (a request lost): the surplus leaves", 2, List.of("1", "2", "3"),
            Set.of(), 2, 2, List.of("3")),
    };
    for (Case c : cases) {
      ExecutorTarget got = ExecutorTarget.decide(c.target, c.live, c.busy, c.requested);
      assertEquals(c.wantTotal, got.requestTotal(), c.name + ": total");
      assertEquals(c.wantKill, got.kill(), c.name + ": kill");
      assertEquals(c.wantTotal >= 0 || !c.wantKill.isEmpty(), got.any(), c.name + ": any");
    }
  }

  @Test
  void neverBelowOne() {
    assertThrows(IllegalArgumentException.class,
        () -> ExecutorTarget.decide(0, List.of("1"), Set.of(), 1));
  }

  @Test
  void parse() {
    StringBuilder why = new StringBuilder();
    assertEquals(4, ExecutorTarget.parse(" 4\n", why));
    for (String bad : new String[] {"0", "-2", "four", "2.5", ""}) {
      why.setLength(0);
      assertNull(ExecutorTarget.parse(bad, why), bad);
      assertTrue(why.toString().contains("not a whole number of at least 1"), bad + ": " + why);
    }
    why.setLength(0);
    assertNull(ExecutorTarget.parse(null, why));
    assertEquals("no value", why.toString());
  }
}
