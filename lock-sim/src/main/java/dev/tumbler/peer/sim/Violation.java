package dev.tumbler.peer.sim;

/**
 * A broken rule: ends the run that found it. Its message names what broke, the rule's name first where it has one
 * ({@code exclusion:}, {@code bookkeeping:}, ...), which shrinking keeps and the mutation tests match. Without a stack trace: runs that
 * fail are many while a mutation is hunted, and the report says where.
 */
final class Violation extends RuntimeException {
  private static final long serialVersionUID = 1L;

  Violation(String message) {
    super(message, null, false, false);
  }
}
