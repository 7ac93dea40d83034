package dev.tumbler.lock;

/**
 * The wait for a lock, permits or a transaction ended before it was granted. The message names the lock, the provider, how long the caller waited and, where the backend knows it, who holds the lock.
 */
public class LockTimeoutException extends LockException {
  private static final long serialVersionUID = 1L;

  public LockTimeoutException(String message) {
    super(message);
  }

  public LockTimeoutException(String message, Throwable cause) {
    super(message, cause);
  }
}
