package dev.tumbler.peer.provider;

import dev.tumbler.lock.tck.LockTck;
import dev.tumbler.lock.tck.TckTarget;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

/**
 * The TCK against the bakery (snaplock's quorum bakery among elected leaders) on {@code
 * lock:native:local?algorithm=bakery}: one node, its own only leader.
 *
 * <p>Not in the default run yet: every group it runs passed in targeted runs, but under a full-suite run's load
 * the bakery failed some intermittently (see the native README, "The bakery"). Run it with
 * {@code -Dtck.bakery=true}.
 */
@EnabledIfSystemProperty(named = "tck.bakery", matches = "true")
class NativeBakeryLocalTckTest extends LockTck {
  @Override
  protected TckTarget createTarget() {
    return NativeTargets.local("bakery");
  }
}
