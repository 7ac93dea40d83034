package dev.tumbler.lock;

/**
 * An operation needed a lease that is no longer valid: it was released, it expired because no renewal succeeded in time, or the backend revoked it. Another holder may already exist.
 */
public class LeaseLostException extends LockException {
  private static final long serialVersionUID = 1L;

  public LeaseLostException(String message) {
    super(message);
  }

  public LeaseLostException(String message, Throwable cause) {
    super(message, cause);
  }
}
