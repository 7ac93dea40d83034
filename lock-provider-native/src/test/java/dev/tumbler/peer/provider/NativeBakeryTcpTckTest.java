package dev.tumbler.peer.provider;

import dev.tumbler.lock.tck.LockTck;
import dev.tumbler.lock.tck.TckTarget;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

/**
 * The TCK against the bakery (snaplock's quorum bakery among elected leaders) on a 3-node cluster over real TCP
 * on loopback, a proxy on every link, with the same minority faults.
 *
 * <p>Not in the default run yet: every group it runs passed in targeted runs, but under a full-suite run's load
 * the bakery failed some intermittently (see the native README, "The bakery"). Run it with
 * {@code -Dtck.bakery=true}.
 */
@EnabledIfSystemProperty(named = "tck.bakery", matches = "true")
class NativeBakeryTcpTckTest extends LockTck {
  @Override
  protected TckTarget createTarget() {
    return NativeTargets.tcp("bakery");
  }
}
