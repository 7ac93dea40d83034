package dev.tumbler.cli;

import dev.tumbler.peer.algorithm.Algorithms;
import java.util.Iterator;

/** The native algorithms' names, from the provider's registry: picocli's completion candidates and help. */
final class AlgorithmNames implements Iterable<String> {
  @Override
  public Iterator<String> iterator() {
    return Algorithms.names().iterator();
  }
}
