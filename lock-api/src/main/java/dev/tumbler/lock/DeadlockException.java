package dev.tumbler.lock;

/**
 * The lock transaction was chosen to abort to resolve a deadlock (see {@link TransactionOptions#abortOnDeadlock()}). Every lock of the transaction has been released.
 */
public class DeadlockException extends LockException {
  private static final long serialVersionUID = 1L;

  public DeadlockException(String message) {
    super(message);
  }

  public DeadlockException(String message, Throwable cause) {
    super(message, cause);
  }
}
