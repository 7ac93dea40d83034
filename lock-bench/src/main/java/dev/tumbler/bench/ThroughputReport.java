package dev.tumbler.bench;

import dev.tumbler.bench.ThroughputBench.Result;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The throughput bench's picture: one HTML page with inline SVG (no script, no external file): grants per second
 * of every target for many names and for one hot name, side by side on a log scale with the Redis and Hazelcast
 * anchors drawn across; grants per second against threads; and the full table.
 */
final class ThroughputReport {

  private ThroughputReport() {}

  private static final String[] COLOURS = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#8c564b", "#e377c2",
      "#7f7f7f", "#bcbd22", "#17becf", "#ff7f0e", "#393b79", "#637939"};

  static String html(List<Result> results, String setting) {
    StringBuilder h = new StringBuilder();
    h.append("<!doctype html><html><head><meta charset=\"utf-8\"><title>Tumbler throughput</title><style>")
        .append("body{font:14px sans-serif;margin:24px;color:#222}table{border-collapse:collapse}")
        .append("td,th{padding:3px 8px;border-bottom:1px solid #ddd;text-align:right}td:first-child,th:first-child,")
        .append("td:nth-child(2),th:nth-child(2){text-align:left}.bad{color:#b00;font-weight:bold}")
        .append("h2{margin-top:32px}</style></head><body>");
    h.append("<h1>Throughput: grants per second</h1><p>").append(esc(setting))
        .append(". Each operation is <code>tryAcquire(1 s)</code> then release, by threads spread over three clients. ")
        .append("Read the ratios: every target shares the machine's cores with its own servers.</p>");
    h.append("<h2>Many names (A16: 16 threads, random names out of 1,000) and one hot name (B16)</h2>");
    h.append(bars(results));
    h.append("<h2>Threads: A at 4, 16 and 64 threads</h2>");
    h.append(curve(results));
    h.append("<h2>Every row</h2>").append(table(results));
    h.append("</body></html>\n");
    return h.toString();
  }

  /** Horizontal bars, two per target (A16 above B16), log scale, anchors as vertical lines. */
  private static String bars(List<Result> results) {
    List<String> targets = targets(results);
    double max = 1;
    for (Result r : results) {
      max = Math.max(max, r.opsPerSecond());
    }
    double top = Math.pow(10, Math.ceil(Math.log10(max)));
    int left = 170;
    int width = 620;
    int row = 34;
    int first = 60; // the legend and the two anchor labels above the bars, each on a line of its own
    int height = first + 6 + targets.size() * row + 30;
    StringBuilder s = new StringBuilder();
    s.append(String.format(Locale.ROOT, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
        + "font-size=\"12\">", left + width + 120, height));
    for (double tick = 10; tick <= top; tick *= 10) {
      double x = left + x(tick, top, width);
      s.append(String.format(Locale.ROOT, "<line x1=\"%.1f\" y1=\"54\" x2=\"%.1f\" y2=\"%d\" stroke=\"#ddd\"/>"
          + "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>", x, x, height - 30, x, height - 14,
          si(tick)));
    }
    s.append(String.format(Locale.ROOT, "<rect x=\"%d\" y=\"6\" width=\"12\" height=\"10\" fill=\"#4c78a8\"/>"
        + "<text x=\"%d\" y=\"15\">A16</text><rect x=\"%d\" y=\"6\" width=\"12\" height=\"10\" fill=\"#f58518\"/>"
        + "<text x=\"%d\" y=\"15\">B16</text>", left, left + 16, left + 60, left + 76));
    for (int i = 0; i < targets.size(); i++) {
      String t = targets.get(i);
      int y = first + i * row;
      s.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%s</text>", left - 8, y + 18,
          esc(t)));
      bar(s, ThroughputBench.find(results, t, "A16"), left, y + 2, width, top, "#4c78a8");
      bar(s, ThroughputBench.find(results, t, "B16"), left, y + 16, width, top, "#f58518");
    }
    for (String anchor : List.of("redis", "hazelcast")) {
      Result a = ThroughputBench.find(results, anchor, "A16");
      if (a != null && a.opsPerSecond() > 0) {
        double x = left + x(a.opsPerSecond(), top, width);
        int labelY = anchor.equals("redis") ? 32 : 48;
        s.append(String.format(Locale.ROOT, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#4c78a8\" "
            + "stroke-dasharray=\"4 3\"/><text x=\"%.1f\" y=\"%d\" fill=\"#4c78a8\">%s A16: %s/s</text>", x,
            labelY + 3, x, height - 30, x + 3, labelY, anchor, String.format(Locale.ROOT, "%,.0f", a.opsPerSecond())));
      }
    }
    return s.append("</svg>").toString();
  }

  private static void bar(StringBuilder s, Result r, int left, int y, int width, double top, String colour) {
    if (r == null) {
      return;
    }
    double w = Math.max(1, x(Math.max(r.opsPerSecond(), 1), top, width));
    s.append(String.format(Locale.ROOT, "<rect x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"12\" fill=\"%s\"/>"
        + "<text x=\"%.1f\" y=\"%d\">%s%s</text>", left, y, w, colour, left + w + 4, y + 10,
        String.format(Locale.ROOT, "%,.0f", r.opsPerSecond()),
        r.exclusionViolations() + r.tokenViolations() > 0 ? " VIOLATIONS" : r.timeouts() > 0
            ? " (" + r.timeouts() + " time-outs)" : ""));
  }

  /** x of {@code value} on a log scale from 1 to {@code top} over {@code width}. */
  private static double x(double value, double top, int width) {
    return Math.log10(Math.max(value, 1)) / Math.log10(top) * width;
  }

  /** Grants per second against threads (4, 16, 64: log scale both ways), one line per target. */
  private static String curve(List<Result> results) {
    List<String> targets = targets(results);
    int[] threads = {4, 16, 64};
    double max = 1;
    for (Result r : results) {
      max = Math.max(max, r.opsPerSecond());
    }
    double top = Math.pow(10, Math.ceil(Math.log10(max)));
    int left = 60;
    int width = 420;
    int height = 320;
    int legend = 200;
    StringBuilder s = new StringBuilder();
    s.append(String.format(Locale.ROOT, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
        + "font-size=\"12\">", left + width + legend, height + 50));
    for (double tick = 10; tick <= top; tick *= 10) {
      double y = 10 + height - x(tick, top, height);
      s.append(String.format(Locale.ROOT, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#ddd\"/>"
          + "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>", left, y, left + width, y, left - 6, y + 4,
          si(tick)));
    }
    for (int i = 0; i < threads.length; i++) {
      double x = left + 30 + i * (width - 60) / 2.0;
      s.append(String.format(Locale.ROOT, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%d threads</text>", x,
          height + 30, threads[i]));
    }
    for (int k = 0; k < targets.size(); k++) {
      String t = targets.get(k);
      String colour = COLOURS[k % COLOURS.length];
      StringBuilder points = new StringBuilder();
      for (int i = 0; i < threads.length; i++) {
        Result r = ThroughputBench.find(results, t, "A" + threads[i]);
        if (r == null || r.opsPerSecond() <= 0) {
          continue;
        }
        double x = left + 30 + i * (width - 60) / 2.0;
        double y = 10 + height - x(r.opsPerSecond(), top, height);
        points.append(String.format(Locale.ROOT, "%.1f,%.1f ", x, y));
        s.append(String.format(Locale.ROOT, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"/>", x, y, colour));
      }
      s.append(String.format(Locale.ROOT, "<polyline points=\"%s\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\"/>",
          points.toString().trim(), colour));
      s.append(String.format(Locale.ROOT, "<rect x=\"%d\" y=\"%d\" width=\"12\" height=\"3\" fill=\"%s\"/>"
          + "<text x=\"%d\" y=\"%d\">%s</text>", left + width + 16, 14 + k * 18, colour, left + width + 32,
          19 + k * 18, esc(t)));
    }
    return s.append("</svg>").toString();
  }

  private static String table(List<Result> results) {
    StringBuilder s = new StringBuilder("<table><tr><th>target</th><th>workload</th><th>ops/s</th><th>p50</th>"
        + "<th>p99</th><th>time-outs</th><th>errors</th><th>ops/s per client</th><th>× redis</th>"
        + "<th>× hazelcast</th><th>violations</th></tr>");
    for (Result r : results) {
      StringBuilder perClient = new StringBuilder();
      for (double c : r.perClient()) {
        perClient.append(perClient.isEmpty() ? "" : " / ").append(String.format(Locale.ROOT, "%,.0f", c));
      }
      long violations = r.exclusionViolations() + r.tokenViolations();
      s.append("<tr><td>").append(esc(r.target())).append("</td><td>").append(esc(r.workload().describe()))
          .append("</td><td>").append(String.format(Locale.ROOT, "%,.0f", r.opsPerSecond())).append("</td><td>")
          .append(esc(ThroughputBench.micros(r.p50Micros()))).append("</td><td>")
          .append(esc(ThroughputBench.micros(r.p99Micros()))).append("</td><td>").append(r.timeouts())
          .append("</td><td").append(r.errors() > 0 ? " class=\"bad\" title=\"" + esc(String.valueOf(r.firstError()))
              + "\"" : "").append(">").append(r.errors()).append("</td><td>").append(perClient).append("</td><td>")
          .append(ThroughputBench.ratio(r, ThroughputBench.find(results, "redis", r.workload().label())))
          .append("</td><td>")
          .append(ThroughputBench.ratio(r, ThroughputBench.find(results, "hazelcast", r.workload().label())))
          .append("</td><td").append(violations > 0 ? " class=\"bad\"" : "").append(">")
          .append(violations > 0 ? "exclusion " + r.exclusionViolations() + ", token order " + r.tokenViolations()
              : "0").append("</td></tr>");
    }
    return s.append("</table>").toString();
  }

  private static List<String> targets(List<Result> results) {
    Map<String, Boolean> seen = new LinkedHashMap<>();
    for (Result r : results) {
      seen.put(r.target(), true);
    }
    return new ArrayList<>(seen.keySet());
  }

  private static String si(double v) {
    if (v >= 1_000_000) {
      return String.format(Locale.ROOT, "%.0fM", v / 1_000_000);
    }
    return v >= 1_000 ? String.format(Locale.ROOT, "%.0fk", v / 1_000) : String.format(Locale.ROOT, "%.0f", v);
  }

  private static String esc(String s) {
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\"", "&quot;");
  }
}
