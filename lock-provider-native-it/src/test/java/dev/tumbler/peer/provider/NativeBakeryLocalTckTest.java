package dev.tumbler.peer.provider;

import dev.tumbler.lock.tck.LockTck;
import dev.tumbler.lock.tck.TckTarget;

/**
 * The TCK against the bakery (snaplock's quorum bakery among elected leaders) on {@code
 * lock:native:local?algorithm=bakery}: one node, its own only leader.
 */
class NativeBakeryLocalTckTest extends LockTck {
  @Override
  protected TckTarget createTarget() {
    return NativeTargets.local("bakery");
  }
}
