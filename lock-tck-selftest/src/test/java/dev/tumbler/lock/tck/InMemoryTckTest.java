package dev.tumbler.lock.tck;

import dev.tumbler.lock.tck.memory.Defect;
import dev.tumbler.lock.tck.memory.MemoryTarget;

/** The TCK against the correct reference provider: every declared group must pass. */
class InMemoryTckTest extends LockTck {
  @Override
  protected TckTarget createTarget() {
    return new MemoryTarget(Defect.NONE);
  }
}
