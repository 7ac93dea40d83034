package dev.tumbler.peer.algorithm;

import dev.tumbler.peer.agent.AgentAlgorithm;
import dev.tumbler.peer.buckets.BucketsAlgorithm;
import dev.tumbler.peer.bakery.BakeryAlgorithm;
import dev.tumbler.peer.lamport.LamportAlgorithm;
import dev.tumbler.peer.lease.LeaseAlgorithm;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Every algorithm of the native provider, in the order help texts and the demo list them. The first is
 * the default. Adding an algorithm is adding its descriptor here.
 */
public final class Algorithms {

  private static final List<Algorithm<?>> ALL = List.of(
      LamportAlgorithm.LAMPORT,
      LamportAlgorithm.RICART_AGRAWALA,
      BakeryAlgorithm.BAKERY,
      AgentAlgorithm.AGENT,
      LeaseAlgorithm.LEASE,
      BucketsAlgorithm.BUCKETS);

  private Algorithms() {}

  /** Every algorithm, the default first. */
  public static List<Algorithm<?>> all() {
    return ALL;
  }

  /** The algorithm a URL without {@code algorithm=} runs. */
  public static Algorithm<?> defaultAlgorithm() {
    return ALL.get(0);
  }

  /** Every algorithm's name, in order. */
  public static List<String> names() {
    List<String> names = new ArrayList<>();
    for (Algorithm<?> a : ALL) {
      names.add(a.name());
    }
    return List.copyOf(names);
  }

  /** The algorithm called {@code name} exactly, if there is one. */
  public static Optional<Algorithm<?>> byName(String name) {
    for (Algorithm<?> a : ALL) {
      if (a.name().equals(name)) {
        return Optional.of(a);
      }
    }
    return Optional.empty();
  }
}
