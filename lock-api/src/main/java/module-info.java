/**
 * Tumbler: one vendor-neutral API for distributed locks, leases, semaphores, read/write locks, lock
 * transactions and leader elections. Applications use {@code dev.tumbler.lock}; provider authors use
 * {@code dev.tumbler.lock.spi}. Nothing else is exported.
 */
module dev.tumbler.lock {
  exports dev.tumbler.lock;
  exports dev.tumbler.lock.spi;

  uses dev.tumbler.lock.spi.LockProvider;
}
