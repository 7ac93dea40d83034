package dev.tumbler.lock.micrometer;

import dev.tumbler.lock.Lock;
import dev.tumbler.lock.ReadWriteLock;

/** A read/write lock whose two sides are metered as the kinds {@code read} and {@code write}. */
final class MeteredReadWriteLock implements ReadWriteLock {
  private final ReadWriteLock delegate;
  private final Lock readLock;
  private final Lock writeLock;

  MeteredReadWriteLock(ReadWriteLock delegate, LockMetrics metrics) {
    this.delegate = delegate;
    this.readLock = new MeteredLock(delegate.readLock(), metrics, MeteredLockService.KIND_READ);
    this.writeLock = new MeteredLock(delegate.writeLock(), metrics, MeteredLockService.KIND_WRITE);
  }

  @Override
  public String name() {
    return delegate.name();
  }

  @Override
  public Lock readLock() {
    return readLock;
  }

  @Override
  public Lock writeLock() {
    return writeLock;
  }

  @Override
  public String toString() {
    return delegate.toString();
  }
}
