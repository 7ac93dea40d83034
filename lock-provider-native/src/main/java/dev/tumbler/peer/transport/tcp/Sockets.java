package dev.tumbler.peer.transport.tcp;

import dev.tumbler.lock.spi.LockUrl;
import java.io.Closeable;
import java.io.EOFException;
import java.io.IOException;
import java.time.Duration;
import java.util.Locale;

/** Small helpers of the TCP package: {@code host:port} ids, socket timeouts, closing, and I/O failures in log lines. */
final class Sockets {
  private Sockets() {}

  /**
   * Normalizes {@code host:port}: host lower case, IPv6 in brackets.
   *
   * @throws IllegalArgumentException naming {@code what} if malformed
   */
  static String normalizeId(String id, String what, boolean allowPortZero) {
    String s = id.trim();
    String host;
    String port;
    if (s.startsWith("[")) {
      int close = s.indexOf(']');
      if (close < 0 || close + 1 >= s.length() || s.charAt(close + 1) != ':') {
        throw new IllegalArgumentException(what + ": '" + id + "' is not [ipv6]:port");
      }
      host = s.substring(1, close);
      port = s.substring(close + 2);
    } else {
      int colon = s.lastIndexOf(':');
      if (colon <= 0 || s.indexOf(':') != colon) {
        throw new IllegalArgumentException(what + ": '" + id + "' is not host:port");
      }
      host = s.substring(0, colon);
      port = s.substring(colon + 1);
    }
    if (host.isEmpty()) {
      throw new IllegalArgumentException(what + ": '" + id + "' has no host");
    }
    int p;
    try {
      p = Integer.parseInt(port);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(what + ": '" + id + "' has no valid port");
    }
    if (p < (allowPortZero ? 0 : 1) || p > 65535) {
      throw new IllegalArgumentException(what + ": port " + p + " in '" + id + "' is out of range");
    }
    return new LockUrl.HostAndPort(host.toLowerCase(Locale.ROOT), p).toString();
  }

  /** The id of {@code host} and {@code port}, formatted like a normalized one. */
  static String id(String host, int port) {
    return (host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":" + port;
  }

  static String hostOf(String id) {
    if (id.startsWith("[")) {
      return id.substring(1, id.indexOf(']'));
    }
    return id.substring(0, id.lastIndexOf(':'));
  }

  static int portOf(String id) {
    return Integer.parseInt(id.substring(id.lastIndexOf(':') + 1));
  }

  /** Strips control characters from a peer-supplied id before it reaches a log line. */
  static String printable(String s) {
    StringBuilder sb = new StringBuilder();
    s.codePoints().limit(80).forEach(c -> sb.appendCodePoint(Character.isISOControl(c) ? '?' : c));
    return sb.toString();
  }

  static String describe(IOException e) {
    if (e instanceof EOFException) {
      return "closed by the peer";
    }
    return e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
  }

  static int millis(Duration d) {
    return (int) Math.min(Integer.MAX_VALUE, Math.max(1, d.toMillis()));
  }

  static boolean sleepQuietly(long ms) {
    try {
      Thread.sleep(ms);
      return true;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  static void closeQuietly(Closeable c) {
    if (c != null) {
      try {
        c.close();
      } catch (IOException e) {
        // nothing to do
      }
    }
  }
}
