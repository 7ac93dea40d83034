package dev.tumbler.torture;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The one JSON shape the harness reads and writes: a flat object of strings, integers and booleans on one line (a
 * history event, a worker's report, the register's answer). Not a general JSON library: nested values and
 * fractions are refused.
 */
final class Json {
  private Json() {}

  /** {@code fields} as one line of JSON; null values are left out. */
  static String write(Map<String, ?> fields) {
    StringBuilder b = new StringBuilder(96).append('{');
    for (Map.Entry<String, ?> e : fields.entrySet()) {
      Object v = e.getValue();
      if (v == null) {
        continue;
      }
      if (b.length() > 1) {
        b.append(',');
      }
      quote(b, e.getKey());
      b.append(':');
      if (v instanceof Number || v instanceof Boolean) {
        b.append(v);
      } else {
        quote(b, v.toString());
      }
    }
    return b.append('}').toString();
  }

  static void quote(StringBuilder b, String s) {
    b.append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '"' -> b.append("\\\"");
        case '\\' -> b.append("\\\\");
        case '\n' -> b.append("\\n");
        case '\r' -> b.append("\\r");
        case '\t' -> b.append("\\t");
        default -> {
          if (c < 0x20) {
            b.append(String.format("\\u%04x", (int) c));
          } else {
            b.append(c);
          }
        }
      }
    }
    b.append('"');
  }

  /**
   * Reads one flat object: strings stay strings, integers become {@link Long}, {@code true}/{@code false} become
   * {@link Boolean}, {@code null} leaves the key out.
   *
   * @throws IllegalArgumentException naming the position, for anything else
   */
  static Map<String, Object> read(String line) {
    Parser p = new Parser(line);
    Map<String, Object> out = new LinkedHashMap<>();
    p.skip();
    p.expect('{');
    p.skip();
    if (p.peek() == '}') {
      p.pos++;
      p.end();
      return out;
    }
    while (true) {
      p.skip();
      String key = p.string();
      p.skip();
      p.expect(':');
      p.skip();
      Object value = p.value();
      if (value != null) {
        out.put(key, value);
      }
      p.skip();
      char c = p.next();
      if (c == '}') {
        p.end();
        return out;
      }
      if (c != ',') {
        throw p.error("expected , or }");
      }
    }
  }

  private static final class Parser {
    final String s;
    int pos;

    Parser(String s) {
      this.s = s;
    }

    char peek() {
      if (pos >= s.length()) {
        throw error("unexpected end");
      }
      return s.charAt(pos);
    }

    char next() {
      char c = peek();
      pos++;
      return c;
    }

    void skip() {
      while (pos < s.length() && Character.isWhitespace(s.charAt(pos))) {
        pos++;
      }
    }

    void expect(char c) {
      if (next() != c) {
        pos--;
        throw error("expected " + c);
      }
    }

    void end() {
      skip();
      if (pos != s.length()) {
        throw error("text after the object");
      }
    }

    Object value() {
      char c = peek();
      if (c == '"') {
        return string();
      }
      if (s.startsWith("true", pos)) {
        pos += 4;
        return Boolean.TRUE;
      }
      if (s.startsWith("false", pos)) {
        pos += 5;
        return Boolean.FALSE;
      }
      if (s.startsWith("null", pos)) {
        pos += 4;
        return null;
      }
      int start = pos;
      if (c == '-') {
        pos++;
      }
      while (pos < s.length() && Character.isDigit(s.charAt(pos))) {
        pos++;
      }
      if (pos == start || pos == start + 1 && c == '-') {
        throw error("expected a string, an integer, true, false or null");
      }
      try {
        return Long.parseLong(s.substring(start, pos));
      } catch (NumberFormatException e) {
        throw error("integer out of range");
      }
    }

    String string() {
      expect('"');
      StringBuilder b = new StringBuilder();
      while (true) {
        char c = next();
        if (c == '"') {
          return b.toString();
        }
        if (c != '\\') {
          b.append(c);
          continue;
        }
        char e = next();
        switch (e) {
          case '"', '\\', '/' -> b.append(e);
          case 'n' -> b.append('\n');
          case 'r' -> b.append('\r');
          case 't' -> b.append('\t');
          case 'b' -> b.append('\b');
          case 'f' -> b.append('\f');
          case 'u' -> {
            if (pos + 4 > s.length()) {
              throw error("short \\u escape");
            }
            try {
              b.append((char) Integer.parseInt(s.substring(pos, pos + 4), 16));
            } catch (NumberFormatException ex) {
              throw error("bad \\u escape");
            }
            pos += 4;
          }
          default -> throw error("bad escape \\" + e);
        }
      }
    }

    IllegalArgumentException error(String what) {
      return new IllegalArgumentException(what + " at column " + (pos + 1) + " of: "
          + (s.length() > 200 ? s.substring(0, 200) + "…" : s));
    }
  }
}
