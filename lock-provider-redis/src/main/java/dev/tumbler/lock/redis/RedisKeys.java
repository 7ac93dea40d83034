package dev.tumbler.lock.redis;

import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * Maps lock names to Redis keys and channels.
 *
 * <p>Layout: {@code tumbler:[<namespace>:]<kind>:{<name>}[:<part>]}, where {@code <kind>} is {@code m}
 * (mutex), {@code rw} (read/write lock), {@code s} (semaphore) or {@code e} (election). Three properties
 * matter:
 *
 * <ul>
 *   <li><b>Injective.</b> The name and namespace are percent-encoded: every byte of their UTF-8 form
 *       outside {@code [A-Za-z0-9._-/]} becomes {@code %XX}, and {@code %} itself is encoded. Two
 *       different names therefore never share a key ({@code "a:b"}, {@code "a/b"}, {@code "a%3Ab"},
 *       {@code "A:b"} stay four locks), and a name cannot forge the separators.
 *   <li><b>One hash slot per lock.</b> The encoded name sits alone inside {@code {...}}; since encoding
 *       removes every {@code {} and {@code }}, the hash tag cannot be cut short or widened by the name,
 *       so all keys of one lock are in one slot and every script works on Redis Cluster.
 *   <li><b>One kind per key.</b> A mutex, a read/write lock and a semaphore of the same name have
 *       different kind segments, so no script ever meets a key of the wrong type (no {@code WRONGTYPE}).
 * </ul>
 *
 * Without a namespace the kind follows {@code tumbler:} directly; with one, the namespace segment never
 * contains {@code {}, while a kind segment is always followed by {@code :{}: the two forms cannot collide.
 * Immutable and thread safe.
 */
final class RedisKeys {

  /** The kinds of primitive, each with its own key segment. */
  enum Kind {
    MUTEX("m"), READ_WRITE("rw"), SEMAPHORE("s"), ELECTION("e");

    final String segment;

    Kind(String segment) {
      this.segment = segment;
    }
  }

  private final String prefix;

  RedisKeys(String namespace) {
    this.prefix = namespace.isEmpty() ? "tumbler:" : "tumbler:" + encode(namespace) + ":";
  }

  /** What every key of this namespace starts with: {@code tumbler:} or {@code tumbler:<namespace>:}. */
  String prefix() {
    return prefix;
  }

  /** The common start of every key of this primitive: {@code tumbler:[ns:]kind:{name}}. Also its channel. */
  String base(Kind kind, String name) {
    return prefix + kind.segment + ":{" + encode(name) + "}";
  }

  /** The keys of a mutex (or an election, with {@link Kind#ELECTION}): the holder, the fencing counter. */
  List<String> mutex(Kind kind, String name) {
    String b = base(kind, name);
    return List.of(b, b + ":fence");
  }

  /** The keys of a read/write lock: the writer, the readers (sorted set), the fencing counter. */
  List<String> readWrite(String name) {
    String b = base(Kind.READ_WRITE, name);
    return List.of(b + ":w", b + ":r", b + ":fence");
  }

  /** The keys of a semaphore: holders by expiry (sorted set), permits per holder (hash), the fencing counter. */
  List<String> semaphore(String name) {
    String b = base(Kind.SEMAPHORE, name);
    return List.of(b + ":h", b + ":p", b + ":fence");
  }

  /**
   * {@code keys} of a primitive with its waiters' line inserted before the fencing counter (which stays last):
   * the line is a sorted set {@code <base>:q}, and each waiter's own key is {@code <base>:q:<owner>}, in the
   * same hash slot; after an attempt's answer was lost, the record of the wait's attempts is {@code
   * <base>:q:<owner>:n} (it lives a term).
   */
  List<String> withLine(List<String> keys, Kind kind, String name) {
    List<String> out = new java.util.ArrayList<>(keys.subList(0, keys.size() - 1));
    out.add(base(kind, name) + ":q");
    out.add(keys.getLast());
    return List.copyOf(out);
  }

  /** The channel releases of this primitive are published on. */
  String channel(Kind kind, String name) {
    return base(kind, name);
  }

  /** The channel a service subscribes to first, to hold its subscriber connection open. */
  String controlChannel(String clientId) {
    return prefix + "ctl:" + clientId;
  }

  /** The inverse of {@link #encode}. */
  static String decode(String s) {
    java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream(s.length());
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c == '%') {
        out.write(Integer.parseInt(s, i + 1, i + 3, 16));
        i += 2;
      } else {
        out.write(c);
      }
    }
    return out.toString(StandardCharsets.UTF_8);
  }

  /** Percent-encodes {@code s}: injective, and free of {@code { } : %} and of anything but {@code [A-Za-z0-9._-/]}. */
  static String encode(String s) {
    byte[] utf8 = s.getBytes(StandardCharsets.UTF_8);
    StringBuilder sb = new StringBuilder(utf8.length + 8);
    for (byte b : utf8) {
      int c = b & 0xff;
      if (c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-'
          || c == '/') {
        sb.append((char) c);
      } else {
        sb.append('%').append(Character.toUpperCase(Character.forDigit(c >> 4, 16)))
            .append(Character.toUpperCase(Character.forDigit(c & 0xf, 16)));
      }
    }
    return sb.toString();
  }
}
