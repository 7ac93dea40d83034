package dev.tumbler.cli;

import dev.tumbler.cli.Secrets.SecretException;
import dev.tumbler.lock.CredentialsRefusedException;
import dev.tumbler.lock.InvalidLockUrlException;
import dev.tumbler.lock.LockException;
import dev.tumbler.lock.LockProviders;
import dev.tumbler.lock.LockService;
import dev.tumbler.lock.LockTimeoutException;
import dev.tumbler.lock.ServiceUnavailableException;
import java.sql.SQLException;
import java.util.Properties;
import java.util.Set;

/**
 * What a failure of a command means to its user: a documented exit code and one line, never a stack trace unless
 * asked for ({@code --verbose}). Every failure a user can cause or meet is expected, and has a code of its own:
 *
 * <ul>
 *   <li>{@value ExitCodes#CONFIG}: an invalid URL, configuration or secret file; or a
 *       backend that answered {@code connect} but is not set up for this configuration (a missing lock table or
 *       schema): a provider's plain {@link LockException} from {@code connect}, see {@link #connect};
 *   <li>{@value ExitCodes#NO_PERMISSION}: the backend refused the credentials ({@link CredentialsRefusedException},
 *       or a provider's error caused by Redis's {@code NOAUTH}/{@code WRONGPASS}/{@code NOPERM} or a SQL state of
 *       class 28 or {@code 42501});
 *   <li>{@value ExitCodes#UNAVAILABLE}: the backend cannot be reached ({@link ServiceUnavailableException}), or it
 *       failed a request after {@code connect} (any other {@link LockException}), or it refused {@code connect} for a
 *       passing reason (Redis loading, busy or its cluster down; a SQL state of class 08, 40, 53 or 57);
 *   <li>{@value ExitCodes#LOCK_TIMEOUT}: a {@link LockTimeoutException};
 *   <li>{@value ExitCodes#USAGE}: an {@link IllegalArgumentException} (a bad option value);
 *   <li>{@value ExitCodes#SOFTWARE}: anything else, which is a bug: the line names the exception's class.
 * </ul>
 */
final class Failures {
  /** Redis error replies Jedis turns into its access-control exception: a refused credential or right. */
  private static final String JEDIS_ACCESS = "redis.clients.jedis.exceptions.JedisAccessControlException";
  /** Redis error replies of a server that will serve shortly: loading, busy with a script, its cluster down. */
  private static final Set<String> REDIS_PASSING = Set.of("LOADING", "BUSY", "CLUSTERDOWN", "TRYAGAIN", "MASTERDOWN");

  private Failures() {}

  /**
   * A provider's plain {@link LockException} out of {@code connect}: the backend was reached (else the provider says
   * {@link ServiceUnavailableException}) and refused to serve this configuration.
   */
  static final class ConnectRefused extends RuntimeException {
    ConnectRefused(LockException cause) {
      super(cause.getMessage(), cause);
    }
  }

  /** {@link LockProviders#connect(String, Properties)}, telling a backend's refusal from a failure later on. */
  static LockService connect(String url, Properties info) {
    try {
      return LockProviders.connect(url, info);
    } catch (LockException e) {
      if (e.getClass() == LockException.class) {
        throw new ConnectRefused(e);
      }
      throw e;
    }
  }

  /** The exit code and the line for a failure of a command. */
  record Verdict(int code, String line) {}

  static Verdict of(Throwable e) {
    String message = oneLine(e.getMessage());
    if (e instanceof InvalidLockUrlException || e instanceof SecretException || e instanceof NodeConfig.ConfigException) {
      return new Verdict(ExitCodes.CONFIG, message);
    }
    if (e instanceof CredentialsRefusedException || refusedCredentials(e)) {
      return new Verdict(ExitCodes.NO_PERMISSION, "credentials refused: " + message);
    }
    if (e instanceof ServiceUnavailableException) {
      return new Verdict(ExitCodes.UNAVAILABLE, message);
    }
    if (e instanceof ConnectRefused) {
      return passing(e) ? new Verdict(ExitCodes.UNAVAILABLE, message)
          : new Verdict(ExitCodes.CONFIG, "the backend cannot serve this configuration: " + message);
    }
    if (e instanceof LockTimeoutException) {
      return new Verdict(ExitCodes.LOCK_TIMEOUT, message);
    }
    if (e instanceof LockException) {
      return new Verdict(ExitCodes.UNAVAILABLE, message);
    }
    if (e instanceof IllegalArgumentException) {
      return new Verdict(ExitCodes.USAGE, message);
    }
    return new Verdict(ExitCodes.SOFTWARE, "internal error: " + e.getClass().getName()
        + (e.getMessage() == null ? "" : ": " + message) + " (--verbose shows the stack trace)");
  }

  /** Whether a cause of {@code e} says that the backend refused the credentials or the rights it was given. */
  private static boolean refusedCredentials(Throwable e) {
    for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
      if (t.getClass().getName().equals(JEDIS_ACCESS)) {
        return true;
      }
      if (t instanceof SQLException s && s.getSQLState() != null
          && (s.getSQLState().startsWith("28") || s.getSQLState().equals("42501"))) {
        return true;
      }
    }
    return false;
  }

  /** Whether a cause of {@code e} says that the backend will likely serve if asked again shortly. */
  private static boolean passing(Throwable e) {
    for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
      if (t.getClass().getName().startsWith("redis.clients.jedis.exceptions.") && t.getMessage() != null) {
        String word = t.getMessage().strip().split("\\s", 2)[0];
        if (REDIS_PASSING.contains(word)) {
          return true;
        }
      }
      if (t instanceof SQLException s && s.getSQLState() != null && s.getSQLState().length() >= 2
          && Set.of("08", "40", "53", "57").contains(s.getSQLState().substring(0, 2))) {
        return true;
      }
    }
    return false;
  }

  /** A message on one line: a database's message may hold the statement on lines of its own. */
  static String oneLine(String message) {
    return message == null ? "" : message.strip().replaceAll("\\s*\\R\\s*", " ");
  }
}
