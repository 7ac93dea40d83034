package dev.tumbler.lock;

/**
 * The backend, or a quorum of it, cannot be reached. The message names what is missing (servers, peers). Whether a lease already granted is still valid is told by the lease itself.
 */
public class ServiceUnavailableException extends LockException {
  private static final long serialVersionUID = 1L;

  public ServiceUnavailableException(String message) {
    super(message);
  }

  public ServiceUnavailableException(String message, Throwable cause) {
    super(message, cause);
  }
}
