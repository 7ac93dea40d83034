package dev.tumbler.peer.core;

/**
 * Bytes that are not a valid message: unknown version or type, truncated, oversized, trailing bytes.
 * The TCP transport closes the connection that carried them.
 */
public class CodecException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public CodecException(String message) {
    super(message);
  }

  public CodecException(String message, Throwable cause) {
    super(message, cause);
  }
}
