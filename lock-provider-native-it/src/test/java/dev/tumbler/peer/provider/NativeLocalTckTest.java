package dev.tumbler.peer.provider;

import dev.tumbler.lock.tck.LockTck;
import dev.tumbler.lock.tck.TckTarget;

/** The TCK against {@code lock:native:local}. */
class NativeLocalTckTest extends LockTck {
  @Override
  protected TckTarget createTarget() {
    return NativeTargets.local();
  }
}
