package dev.tumbler.peer.provider;

import dev.tumbler.lock.LockProviders;
import dev.tumbler.lock.LockService;
import dev.tumbler.peer.node.NodeStats;

/**
 * A native member in a JVM of its own, for tests that kill it with SIGKILL ({@code Process.destroyForcibly()}): it
 * opens the node URL given as its one argument, prints {@code READY <node id>}, and runs until it is killed or its
 * standard input ends (the test JVM is gone), then closes.
 */
public final class MemberProcess {

  private MemberProcess() {}

  public static void main(String[] args) throws Exception {
    try (LockService s = LockProviders.connect(args[0])) {
      System.out.println("READY " + s.unwrap(NodeStats.class).nodeId());
      System.out.flush();
      while (System.in.read() >= 0) {
        // nothing comes; the read returns at the end of the input
      }
    }
  }
}
