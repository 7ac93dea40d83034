package dev.tumbler.peer.bakery;

import dev.tumbler.peer.ScriptedCluster;
import dev.tumbler.peer.composite.Channel;
import java.util.Map;

/**
 * A small deterministic cluster of bakery nodes for scripted tests ({@link ScriptedCluster}: election on channel 0,
 * bakery on channel 1), with what only the bakery has: its tables, its owners, its readiness.
 */
final class BakeryCluster extends ScriptedCluster {

  static final long MS = ScriptedCluster.MS;
  /** The simulator's lease term (Appendix A). */
  static final long T = ScriptedCluster.T;
  static final long PEER_TIMEOUT = ScriptedCluster.PEER_TIMEOUT;

  BakeryCluster(int n, long seed) {
    this(n, seed, BakerySettings.simulation());
  }

  BakeryCluster(int n, long seed, BakerySettings settings) {
    super(n, seed, BakeryAlgorithm.BAKERY, settings, null);
  }

  BakeryCore bakery(String id) {
    return (BakeryCore) cores.get(id).core(Channel.LOCK);
  }

  /** A name whose owner, as each given client node chooses it now, is the node given with it. */
  String nameOwnedBy(Map<String, String> clientToOwner) {
    for (int k = 0; k < 10_000; k++) {
      String name = "o" + k;
      boolean all = true;
      for (Map.Entry<String, String> e : clientToOwner.entrySet()) {
        all &= e.getValue().equals(bakery(e.getKey()).ownerFor(name));
      }
      if (all) {
        return name;
      }
    }
    throw new AssertionError("no name with owners " + clientToOwner);
  }

  /** Waits until every live node has the same view and every leader of it is ready. */
  void awaitView() {
    until(this::viewReady, 2_000 * MS, "a view whose leaders are ready");
  }

  boolean viewReady() {
    long term = -1;
    for (String id : cores.keySet()) {
      BakeryCore b = bakery(id);
      if (b.term() == 0 || term != -1 && b.term() != term) {
        return false;
      }
      term = b.term();
    }
    for (String id : cores.keySet()) {
      if (isLeader(id) && !bakery(id).ready()) {
        return false;
      }
    }
    return true;
  }
}
