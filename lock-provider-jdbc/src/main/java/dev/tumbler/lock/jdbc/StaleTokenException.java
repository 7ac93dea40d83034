package dev.tumbler.lock.jdbc;

import dev.tumbler.lock.LockException;

/**
 * A fenced write was rejected: the row already carries a fencing token larger than the writer's, so a
 * later holder of the lock has written it since (the writer's lease ended, whether it knew or not).
 */
public class StaleTokenException extends LockException {
  private static final long serialVersionUID = 1L;

  private final long token;

  public StaleTokenException(String message, long token) {
    super(message);
    this.token = token;
  }

  /** The rejected writer's token. */
  public long token() {
    return token;
  }
}
