package dev.tumbler.cli;

import java.util.List;

/** A plain-text table for the demos: columns padded to their widest cell, no trailing blanks. */
final class TextTable {
  private TextTable() {}

  /**
   * Renders {@code rows} (the first is the header) with {@code gap} between columns, and a rule of dashes under the
   * header when {@code rule}.
   */
  static String render(List<String[]> rows, String gap, boolean rule) {
    int columns = rows.stream().mapToInt(r -> r.length).max().orElse(0);
    int[] widths = new int[columns];
    for (String[] row : rows) {
      for (int c = 0; c < row.length; c++) {
        widths[c] = Math.max(widths[c], row[c].length());
      }
    }
    StringBuilder sb = new StringBuilder();
    for (int r = 0; r < rows.size(); r++) {
      String[] row = rows.get(r);
      StringBuilder line = new StringBuilder();
      for (int c = 0; c < row.length; c++) {
        line.append(c == 0 ? "" : gap).append(row[c]).append(" ".repeat(widths[c] - row[c].length()));
      }
      sb.append(line.toString().stripTrailing()).append('\n');
      if (r == 0 && rule) {
        int total = 0;
        for (int w : widths) {
          total += w;
        }
        sb.append("-".repeat(total + gap.length() * (columns - 1))).append('\n');
      }
    }
    return sb.toString();
  }
}
