package dev.tumbler.peer.provider;

import dev.tumbler.lock.tck.LockTck;
import dev.tumbler.lock.tck.TckTarget;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

/**
 * The TCK against the bakery (snaplock's quorum bakery among elected leaders) on a 3-node in-memory cluster
 * (all three lead), with the minority faults of the {@code FaultTolerance} group: a leader crashed and
 * restarted, or cut off and healed.
 *
 * <p>Not in the default run yet: every group it runs passed in targeted runs, but under a full-suite run's load
 * the bakery failed some intermittently (see the native README, "The bakery"). Run it with
 * {@code -Dtck.bakery=true}.
 */
@EnabledIfSystemProperty(named = "tck.bakery", matches = "true")
class NativeBakeryMemoryTckTest extends LockTck {
  @Override
  protected TckTarget createTarget() {
    return NativeTargets.memory("bakery");
  }
}
