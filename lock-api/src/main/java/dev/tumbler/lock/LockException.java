package dev.tumbler.lock;

/**
 * The root of every exception Tumbler throws for a lock-related failure. All are unchecked: a lock
 * failure is rarely recoverable at the call site, and the API stays usable from lambdas.
 *
 * <p>Messages name the lock, the provider and, where relevant, the time waited and the cause. They never
 * contain a password or a shared secret.
 */
public class LockException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public LockException(String message) {
    super(message);
  }

  public LockException(String message, Throwable cause) {
    super(message, cause);
  }
}
