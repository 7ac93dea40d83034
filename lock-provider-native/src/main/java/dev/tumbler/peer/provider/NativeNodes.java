package dev.tumbler.peer.provider;

import dev.tumbler.lock.LockService;
import dev.tumbler.peer.runtime.PeerNode;

/**
 * The node behind a native service, for this project's own tools on the class path: the {@code tumbler node}
 * command's graceful stop, and tests that crash or cut off a node. Not API: the module does not export this
 * package, and {@code LockService.unwrap} hands out only the node's counters ({@code NodeStats}).
 */
public final class NativeNodes {
  private NativeNodes() {
  }

  /**
   * The node that {@code service} is a session on (shared with every other service on the same node URL).
   *
   * @throws IllegalArgumentException if {@code service} is not a native service
   */
  public static PeerNode<?> of(LockService service) {
    if (service instanceof NativeLockService s) {
      return s.node();
    }
    throw new IllegalArgumentException("not a native service: " + service.info().provider() + " ("
        + service.getClass().getName() + ")");
  }
}
