package dev.tumbler.lock.zookeeper;

import java.nio.charset.StandardCharsets;

/**
 * Maps a lock name to one znode path segment, so that every name a {@link dev.tumbler.lock.LockService}
 * accepts becomes a distinct, valid segment.
 *
 * <p>ZooKeeper rejects some characters in paths (U+0000, U+0001–U+001F, U+007F–U+009F, U+D800–U+F8FF,
 * which includes every surrogate, and U+FFF0–U+FFFF), treats {@code /} as the separator and rejects the
 * segments {@code .} and {@code ..}. A name is therefore percent-escaped: {@code %}, {@code /} and every
 * rejected character become {@code %XX} for each byte of their UTF-8 form (a supplementary character such
 * as an emoji is escaped as its four UTF-8 bytes, not as two surrogates), and a name that is exactly
 * {@code .} or {@code ..} has its dots escaped too. Because {@code %} itself is always escaped, the
 * mapping is injective: {@code "a/b"}, {@code "a%2Fb"} and {@code "a.b"} stay three segments. All other
 * characters, including other non-ASCII letters, are kept as they are so paths stay readable.
 *
 * <p>The reserved {@code /zookeeper} subtree is only reserved at the root; every segment made here lives
 * below the service's root path, so a lock named {@code zookeeper} is an ordinary lock. Thread safe
 * (stateless).
 */
final class ZNodeNames {
  private ZNodeNames() {}

  /** The segment for {@code name}; {@code name} must already be a valid lock name. */
  static String segment(String name) {
    if (name.equals(".")) {
      return "%2E";
    }
    if (name.equals("..")) {
      return "%2E%2E";
    }
    StringBuilder sb = null;
    for (int i = 0; i < name.length(); i++) {
      char c = name.charAt(i);
      if (!needsEscape(c)) {
        if (sb != null) {
          sb.append(c);
        }
        continue;
      }
      if (sb == null) {
        sb = new StringBuilder(name.length() + 16).append(name, 0, i);
      }
      int cp = name.codePointAt(i);
      if (Character.isSupplementaryCodePoint(cp)) {
        i++;
      }
      for (byte b : new String(Character.toChars(cp)).getBytes(StandardCharsets.UTF_8)) {
        sb.append('%').append(HEX[(b >> 4) & 0xF]).append(HEX[b & 0xF]);
      }
    }
    return sb == null ? name : sb.toString();
  }

  /** The name whose {@link #segment} is {@code segment}. */
  static String name(String segment) {
    if (segment.indexOf('%') < 0) {
      return segment;
    }
    java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream(segment.length());
    byte[] utf8 = segment.getBytes(StandardCharsets.UTF_8);
    for (int i = 0; i < utf8.length; i++) {
      if (utf8[i] == '%') {
        out.write(Integer.parseInt(new String(utf8, i + 1, 2, StandardCharsets.US_ASCII), 16));
        i += 2;
      } else {
        out.write(utf8[i]);
      }
    }
    return out.toString(StandardCharsets.UTF_8);
  }

  private static final char[] HEX = "0123456789ABCDEF".toCharArray();

  /** Whether ZooKeeper rejects {@code c} in a path, or it is our escape character or the separator. */
  static boolean needsEscape(char c) {
    return c == '%' || c == '/' || c <= '\u001f' || (c >= '\u007f' && c <= '\u009f')
        || (c >= '\ud800' && c <= '\uf8ff') || c >= '\ufff0';
  }
}
