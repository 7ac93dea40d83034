package dev.tumbler.peer.provider;

import dev.tumbler.lock.tck.LockTck;
import dev.tumbler.lock.tck.TckTarget;

/**
 * The TCK against {@code bakery} through thin clients (CLIENTS.md): every service is a client of a 3-node TCP cluster,
 * served by one member and failing over to another when that member is killed ({@code FaultTolerance}).
 */
class NativeBakeryClientTckTest extends LockTck {
  @Override
  protected TckTarget createTarget() {
    return NativeClientTargets.tcp("bakery");
  }
}
