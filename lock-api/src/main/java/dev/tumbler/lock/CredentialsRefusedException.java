package dev.tumbler.lock;

/**
 * The backend refused the credentials the service was given: a wrong password or shared secret, or a user without
 * the rights the provider needs. A configuration error, not an outage: trying again with the same credentials cannot
 * help, so a provider reports it at once instead of retrying until a time-out. The message names the parameter that
 * holds the credential ({@code clientSecret}, {@code password}, …), never its value.
 */
public class CredentialsRefusedException extends LockException {
  private static final long serialVersionUID = 1L;

  public CredentialsRefusedException(String message) {
    super(message);
  }

  public CredentialsRefusedException(String message, Throwable cause) {
    super(message, cause);
  }
}
