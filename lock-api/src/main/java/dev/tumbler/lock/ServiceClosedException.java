package dev.tumbler.lock;

/**
 * The {@link LockService} was closed: no new lock, lease or wait can be had through it, and waits in progress end with this exception.
 */
public class ServiceClosedException extends LockException {
  private static final long serialVersionUID = 1L;

  public ServiceClosedException(String message) {
    super(message);
  }

  public ServiceClosedException(String message, Throwable cause) {
    super(message, cause);
  }
}
