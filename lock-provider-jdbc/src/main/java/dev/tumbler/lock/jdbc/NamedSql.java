package dev.tumbler.lock.jdbc;

import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * SQL written with named parameters ({@code :key}), turned into JDBC's positional {@code ?} once, and bound
 * by name: a statement that uses one value in ten places cannot get their order wrong. Immutable.
 *
 * @param sql the statement with {@code ?} placeholders
 * @param names the parameter name of each placeholder, in order
 */
record NamedSql(String sql, List<String> names) {
  private static final Pattern NAME = Pattern.compile("(?<!:):([a-z]+)");

  static NamedSql of(String named) {
    List<String> names = new ArrayList<>();
    Matcher m = NAME.matcher(named);
    StringBuilder sb = new StringBuilder();
    while (m.find()) {
      names.add(m.group(1));
      m.appendReplacement(sb, "?");
    }
    m.appendTail(sb);
    return new NamedSql(sb.toString(), Collections.unmodifiableList(names));
  }

  /** Binds every placeholder from {@code values}, by name. */
  void bind(PreparedStatement s, Map<String, Object> values) throws SQLException {
    for (int i = 0; i < names.size(); i++) {
      String n = names.get(i);
      if (!values.containsKey(n)) {
        throw new IllegalArgumentException("no value for parameter :" + n);
      }
      s.setObject(i + 1, values.get(n));
    }
  }
}
