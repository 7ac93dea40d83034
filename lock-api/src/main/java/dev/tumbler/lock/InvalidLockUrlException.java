package dev.tumbler.lock;

/**
 * A lock URL that cannot be used: its scheme names no installed provider (the message lists the installed ones), it is malformed (the message says what and where), or it has an unknown or invalid parameter (the message names it and the accepted ones). The message quotes the URL only in its redacted form.
 */
public class InvalidLockUrlException extends LockException {
  private static final long serialVersionUID = 1L;

  public InvalidLockUrlException(String message) {
    super(message);
  }

  public InvalidLockUrlException(String message, Throwable cause) {
    super(message, cause);
  }
}
