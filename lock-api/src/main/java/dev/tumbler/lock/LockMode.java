package dev.tumbler.lock;

/** How a {@link LockTransaction} holds a name. */
public enum LockMode {
  /** Shared with other readers. */
  READ,
  /** Exclusive. */
  WRITE
}
