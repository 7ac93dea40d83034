package dev.tumbler.lock.zookeeper;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tumbler.lock.spi.Checks;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.apache.curator.utils.PathUtils;
import org.junit.jupiter.api.Test;

class ZNodeNamesTest {

  /** Undoes the escaping: if this round-trips for every name, the mapping is injective. */
  private static String decode(String segment) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    for (int i = 0; i < segment.length(); ) {
      char c = segment.charAt(i);
      if (c == '%') {
        out.write(Integer.parseInt(segment.substring(i + 1, i + 3), 16));
        i += 3;
      } else {
        int cp = segment.codePointAt(i);
        byte[] b = new String(Character.toChars(cp)).getBytes(StandardCharsets.UTF_8);
        out.write(b, 0, b.length);
        i += Character.charCount(cp);
      }
    }
    return out.toString(StandardCharsets.UTF_8);
  }

  private static void checkValidAndReversible(String name) {
    String seg = ZNodeNames.segment(name);
    assertFalse(seg.contains("/"), "segment of '" + name + "' has a slash: " + seg);
    assertFalse(seg.equals(".") || seg.equals(".."), "segment of '" + name + "' is a relative segment");
    PathUtils.validatePath("/tumbler/locks/" + seg);
    assertEquals(name, decode(seg), "segment " + seg + " does not decode back");
  }

  @Test
  void lookAlikesStayDistinctAndValid() {
    List<String> names = List.of("a/b", "a.b", "a:b", "a%2Fb", "a%2fb", "a\\b", "/", "//", ".", "..", "...", "./",
        "a/../b", "zookeeper", "A", "a", "\u00e4", "a\u0308", "\uD83D\uDD12", "\ue000", "\uf8ff", "\ufff0", "\uffff",
        "\ufffd", "%", "%%", "%25", "x".repeat(Checks.MAX_NAME_LENGTH), "\u00a0", "\u2028");
    Map<String, String> seen = new HashMap<>();
    for (String n : names) {
      checkValidAndReversible(n);
      String prev = seen.put(ZNodeNames.segment(n), n);
      assertEquals(null, prev, "'" + n + "' and '" + prev + "' map to one segment");
    }
  }

  @Test
  void plainNamesAreKept() {
    assertEquals("orders-42", ZNodeNames.segment("orders-42"));
    assertEquals("日本", ZNodeNames.segment("日本"));
    assertEquals("a%2Fb", ZNodeNames.segment("a/b"));
    assertEquals("a%252Fb", ZNodeNames.segment("a%2Fb"));
    assertEquals("%2E", ZNodeNames.segment("."));
    assertEquals("%2E%2E", ZNodeNames.segment(".."));
    assertEquals("%F0%9F%94%92", ZNodeNames.segment("\uD83D\uDD12"));
  }

  @Test
  void randomValidNamesAreValidSegments() {
    SplittableRandom r = new SplittableRandom(42);
    Map<String, String> seen = new HashMap<>();
    for (int i = 0; i < 20_000; i++) {
      StringBuilder sb = new StringBuilder();
      int len = 1 + r.nextInt(8);
      while (sb.length() < len) {
        int cp = switch (r.nextInt(4)) {
          case 0 -> "./%a\\:".charAt(r.nextInt(6));
          case 1 -> r.nextInt(0x20, 0x250);
          case 2 -> r.nextInt(0xd7f0, 0x10000);
          default -> r.nextInt(0x10000, 0x110000);
        };
        if (Character.isSurrogate((char) cp) && cp < 0x10000) {
          continue;
        }
        sb.appendCodePoint(cp);
      }
      String n = sb.toString();
      try {
        Checks.name(n);
      } catch (IllegalArgumentException e) {
        continue; // not a name the API accepts
      }
      checkValidAndReversible(n);
      String prev = seen.put(ZNodeNames.segment(n), n);
      assertTrue(prev == null || prev.equals(n), "'" + n + "' and '" + prev + "' collide");
    }
  }
}
