package dev.tumbler.lock.spi;

import dev.tumbler.lock.Lock;
import dev.tumbler.lock.ReadWriteLock;
import java.util.Objects;

/**
 * A {@link ReadWriteLock} made of its two sides.
 *
 * @param name the name
 * @param readLock the shared side
 * @param writeLock the exclusive side
 */
public record SimpleReadWriteLock(String name, Lock readLock, Lock writeLock) implements ReadWriteLock {
  public SimpleReadWriteLock {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(readLock, "readLock");
    Objects.requireNonNull(writeLock, "writeLock");
  }
}
