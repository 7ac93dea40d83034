package dev.tumbler.cli;

/**
 * The exit codes of {@code tumbler}, after BSD {@code sysexits.h} where one fits. A command run by
 * {@code tumbler run} passes its own code through (a command killed by signal N gives 128+N, as shells do).
 */
final class ExitCodes {
  static final int OK = 0;
  /** A check of {@code tumbler demo} failed (fencing tokens not increasing, or two holders at once). */
  static final int CHECK_FAILED = 1;
  /** Bad command-line usage (picocli's default). */
  static final int USAGE = 2;
  /** locks: the provider cannot list the locks it holds. */
  static final int UNSUPPORTED = 3;
  /** The lock service could not be reached, or failed a request (EX_UNAVAILABLE). */
  static final int UNAVAILABLE = 69;
  /** An unexpected internal error, a bug (EX_SOFTWARE): one line; {@code --verbose} adds the stack trace. */
  static final int SOFTWARE = 70;
  /** The lock was not acquired within {@code --wait} (EX_TEMPFAIL: try again later). */
  static final int LOCK_TIMEOUT = 75;
  /** The lease was lost while the command ran; the command was killed. */
  static final int LEASE_LOST = 76;
  /** The backend refused the credentials (a password, a client secret) or the rights they carry (EX_NOPERM). */
  static final int NO_PERMISSION = 77;
  /**
   * An invalid lock URL or node configuration, an unreadable or empty secret, or a backend that is not set up for
   * the configuration (a missing lock table or schema) (EX_CONFIG).
   */
  static final int CONFIG = 78;
  /** The command could not be started (not found or not executable), as shells report it. */
  static final int CANNOT_EXECUTE = 127;

  private ExitCodes() {}
}
