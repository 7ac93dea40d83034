package dev.tumbler.torture;

import dev.tumbler.torture.Checker.Analysis;
import dev.tumbler.torture.Checker.FaultWindow;
import dev.tumbler.torture.Checker.Lease;
import dev.tumbler.torture.Violation.Kind;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * The report of a run: a text summary ({@code summary.txt}, also what {@code tumbler torture} prints) and one
 * self-contained HTML page ({@code report.html}: inline CSS and SVG, no script, nothing fetched) with the summary and
 * a timeline per name: who held it when (a bar per lease, its token on it), lost notifications, writes and rejected
 * stale writes, the fault windows shaded, and the violations marked.
 */
public final class Report {
  /** How many examples of each class the summary shows, each with its history excerpt. */
  static final int EXAMPLES = 3;
  static final int EXCERPT = 14;

  private Report() {}

  /** Writes {@code summary.txt} and {@code report.html} in {@code dir}; returns the summary. */
  public static String write(Path dir, Analysis a) {
    String summary = summary(a);
    try {
      Files.writeString(dir.resolve("summary.txt"), summary, StandardCharsets.UTF_8);
      Files.writeString(dir.resolve("report.html"), html(a), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write the report in " + dir, e);
    }
    return summary;
  }

  /** One line per class: its count, how many of them break a promise. */
  static Map<Kind, long[]> table(Analysis a) {
    Map<Kind, long[]> t = new LinkedHashMap<>();
    for (Kind k : Kind.values()) {
      t.put(k, new long[2]);
    }
    for (Violation v : a.violations()) {
      long[] c = t.get(v.kind());
      c[0]++;
      if (v.promised()) {
        c[1]++;
      }
    }
    return t;
  }

  static String verdict(Analysis a) {
    long safety = a.promisedSafetyViolations();
    long liveness = a.promisedLivenessViolations();
    long other = a.violations().size() - safety - liveness;
    if (safety > 0) {
      return "FAILED: " + safety + " violation" + (safety == 1 ? "" : "s") + " of what the provider promises (safety)"
          + (liveness > 0 ? ", " + liveness + " of the bounds on waits and recovery" : "");
    }
    if (liveness > 0) {
      return "bounds broken: " + liveness + " violation" + (liveness == 1 ? "" : "s") + " of the bounds on waits and "
          + "recovery; no safety promise broken" + (other > 0 ? " (" + other + " more that nothing promises)" : "");
    }
    return "no promise broken" + (other > 0 ? "; " + other + " violation" + (other == 1 ? "" : "s")
        + " of what the provider does not promise (see below)" : "");
  }

  /** The text summary. */
  public static String summary(Analysis a) {
    RunParameters r = a.run();
    Map<String, Long> c = a.counts();
    StringBuilder b = new StringBuilder();
    b.append("tumbler torture: ").append(r.target()).append(" — ").append(r.backend()).append('\n');
    b.append("url ").append(r.url()).append("  provider ").append(a.provider()).append("  seed ").append(r.seed())
        .append('\n');
    b.append("capabilities ").append(String.join(" ", new java.util.TreeSet<>(a.capabilities()))).append('\n');
    b.append(String.format(Locale.ROOT, "%d clients, %d names, fault phase %d s, lease term %d ms, maxWait %d ms (+%d ms"
            + " slack), recovery bound %d ms, nemeses %s%n", r.clients(), r.names(), r.timeMillis() / 1000,
        r.leaseMillis(), r.maxWaitMillis(), r.waitSlackMillis(), r.recoveryMillis(),
        r.nemeses().isEmpty() ? "none" : String.join(",", r.nemeses())));
    b.append('\n');
    b.append(String.format(Locale.ROOT, "operations  %d acquires: %d granted, %d timed out, %d failed; %d writes "
            + "accepted, %d stale writes rejected; %d releases; %d leases lost; %d client processes%n",
        c.get("acquires"), c.get("grants"), c.get("timeouts"), c.get("failures"), c.get("writes"), c.get("stale"),
        c.get("releases"), c.get("lost"), c.get("clients")));
    List<String> kinds = new ArrayList<>();
    for (Map.Entry<String, Long> e : c.entrySet()) {
      if (e.getKey().startsWith("fault:")) {
        kinds.add(e.getKey().substring(6) + " " + e.getValue());
      }
    }
    b.append("faults      ").append(c.get("faults")).append(kinds.isEmpty() ? "" : ": " + String.join(", ", kinds))
        .append('\n');
    b.append('\n');
    b.append(String.format(Locale.ROOT, "%-18s %10s %10s  %s%n", "class", "violations", "of promise", "what"));
    for (Map.Entry<Kind, long[]> e : table(a).entrySet()) {
      b.append(String.format(Locale.ROOT, "%-18s %10d %10d  %s%n", e.getKey().label(), e.getValue()[0],
          e.getValue()[1], e.getKey().meaning()));
    }
    b.append(String.format(Locale.ROOT, "%-18s %10d %10s  %s%n", "stale writes", a.staleWrites(), "-",
        "writes the register rejected: how often fencing saved the resource"));
    b.append('\n').append("verdict: ").append(verdict(a)).append('\n');
    for (Kind k : Kind.values()) {
      List<Violation> vs = a.of(k);
      if (vs.isEmpty()) {
        continue;
      }
      b.append('\n').append(k.label()).append(": ").append(vs.size()).append(" (")
          .append(vs.stream().filter(Violation::promised).count()).append(" of a promise)\n");
      Map<String, Integer> why = new TreeMap<>();
      for (Violation v : vs) {
        why.merge((v.promised() ? "promised by " : "") + v.promise(), 1, Integer::sum);
      }
      for (Map.Entry<String, Integer> e : why.entrySet()) {
        b.append("  ").append(e.getValue()).append(" × ").append(e.getKey()).append('\n');
      }
      Map<String, Integer> causes = new TreeMap<>();
      for (Violation v : vs) {
        if (v.causes().isEmpty()) {
          causes.merge("no fault", 1, Integer::sum);
        }
        for (String cause : v.causes()) {
          causes.merge(cause.replaceAll(" #\\d+.*", ""), 1, Integer::sum);
        }
      }
      b.append("  faults in their windows: ");
      List<String> cs = new ArrayList<>();
      causes.forEach((k2, n) -> cs.add(k2 + " " + n));
      b.append(String.join(", ", cs)).append('\n');
      int shown = 0;
      for (Violation v : vs) {
        if (shown++ == EXAMPLES) {
          break;
        }
        b.append("  #").append(shown).append(' ').append(v.name()).append(": ").append(v.summary()).append('\n');
        if (!v.causes().isEmpty()) {
          b.append("     faults: ").append(String.join("; ", v.causes())).append('\n');
        }
        b.append("     ").append(v.promised() ? "breaks: " : "not promised: ").append(v.promise()).append('\n');
        for (Event e : Checker.excerpt(a, v, EXCERPT)) {
          b.append("     ").append(e.describe()).append('\n');
        }
      }
    }
    return b.toString();
  }

  // ---- HTML

  private static final String CSS = """
      body{font:14px/1.4 system-ui,-apple-system,Segoe UI,Helvetica,Arial,sans-serif;margin:20px;color:#222}
      h1{font-size:20px;margin:0 0 4px}h2{font-size:16px;margin:22px 0 6px}
      .sub{color:#555;margin:0 0 10px}
      table{border-collapse:collapse;margin:6px 0}td,th{border:1px solid #ccc;padding:3px 8px;text-align:left}
      th{background:#f3f3f3}td.n{text-align:right;font-variant-numeric:tabular-nums}
      .bad{background:#fde2e2}.warn{background:#fff4d6}.ok{background:#e3f5e1}
      .verdict{padding:8px 12px;border-radius:4px;font-weight:600;display:inline-block;margin:8px 0}
      .scroll{overflow-x:auto;border:1px solid #ddd;padding:4px 0}
      pre{background:#f7f7f7;padding:6px 8px;font-size:12px;overflow-x:auto;margin:4px 0 12px}
      .legend span{display:inline-block;margin-right:14px}
      .sw{display:inline-block;width:14px;height:10px;vertical-align:middle;margin-right:4px;border:1px solid #888}
      svg text{font:11px system-ui,Helvetica,Arial,sans-serif}
      """;

  static String html(Analysis a) {
    RunParameters r = a.run();
    Map<String, Long> c = a.counts();
    StringBuilder h = new StringBuilder(1 << 20);
    h.append("<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>tumbler torture: ")
        .append(esc(r.target())).append("</title><style>").append(CSS).append("</style></head><body>");
    h.append("<h1>tumbler torture: ").append(esc(r.target())).append("</h1>");
    h.append("<p class=\"sub\">").append(esc(r.backend())).append("<br>").append(esc(r.url())).append(" · provider ")
        .append(esc(a.provider())).append(" · seed ").append(r.seed()).append("<br>declares ")
        .append(esc(String.join(" ", new java.util.TreeSet<>(a.capabilities())))).append("</p>");
    String cls = a.promisedSafetyViolations() > 0 ? "bad" : a.promisedLivenessViolations() > 0 ? "warn" : "ok";
    h.append("<div class=\"verdict ").append(cls).append("\">").append(esc(verdict(a))).append("</div>");
    h.append("<table><tr><th>clients</th><th>names</th><th>fault phase</th><th>lease term</th><th>maxWait + slack</th>"
        + "<th>recovery bound</th><th>nemeses</th></tr><tr>")
        .append(td(r.clients())).append(td(r.names())).append(td(r.timeMillis() / 1000 + " s"))
        .append(td(r.leaseMillis() + " ms")).append(td(r.maxWaitMillis() + " + " + r.waitSlackMillis() + " ms"))
        .append(td(r.recoveryMillis() + " ms")).append("<td>")
        .append(esc(r.nemeses().isEmpty() ? "none" : String.join(", ", r.nemeses()))).append("</td></tr></table>");
    h.append("<table><tr><th>acquires</th><th>granted</th><th>timed out</th><th>failed</th><th>writes accepted</th>"
        + "<th>stale writes rejected</th><th>leases lost</th><th>faults</th><th>client processes</th></tr><tr>")
        .append(td(c.get("acquires"))).append(td(c.get("grants"))).append(td(c.get("timeouts")))
        .append(td(c.get("failures"))).append(td(c.get("writes"))).append(td(c.get("stale"))).append(td(c.get("lost")))
        .append(td(c.get("faults"))).append(td(c.get("clients"))).append("</tr></table>");
    h.append("<table><tr><th>class</th><th>violations</th><th>of a promise</th><th>what</th></tr>");
    for (Map.Entry<Kind, long[]> e : table(a).entrySet()) {
      String rc = e.getValue()[1] > 0 ? (e.getKey().safety() ? "bad" : "warn") : e.getValue()[0] > 0 ? "warn" : "";
      h.append("<tr class=\"").append(rc).append("\"><td><a href=\"#").append(e.getKey().label()).append("\">")
          .append(e.getKey().label()).append("</a></td>").append(td(e.getValue()[0])).append(td(e.getValue()[1]))
          .append("<td>").append(esc(e.getKey().meaning())).append("</td></tr>");
    }
    h.append("<tr><td>stale writes</td>").append(td(a.staleWrites()))
        .append("<td></td><td>writes the register rejected: how often fencing saved the resource</td></tr></table>");
    legend(h);
    h.append("<h2>The whole run</h2>");
    timeline(h, a, Math.min(40.0, Math.max(1.0, 1300.0 * 1000 / Math.max(1, end(a)))), false);
    h.append("<h2>Timeline</h2><div class=\"scroll\">");
    timeline(h, a, 40, true);
    h.append("</div>");
    for (Kind k : Kind.values()) {
      List<Violation> vs = a.of(k);
      h.append("<h2 id=\"").append(k.label()).append("\">").append(k.label()).append(": ").append(vs.size())
          .append("</h2>");
      if (vs.isEmpty()) {
        h.append("<p>none</p>");
        continue;
      }
      int shown = 0;
      for (Violation v : vs) {
        if (shown++ == 10) {
          h.append("<p>… and ").append(vs.size() - 10).append(" more (summary.txt, history.jsonl)</p>");
          break;
        }
        h.append("<p id=\"v-").append(k.label()).append('-').append(shown).append("\"><b>").append(esc(v.name()))
            .append("</b>: ").append(esc(v.summary())).append("<br>")
            .append(v.causes().isEmpty() ? "no fault in the window" : "faults: " + esc(String.join("; ", v.causes())))
            .append("<br>").append(v.promised() ? "<b>breaks</b> " : "not promised: ").append(esc(v.promise()))
            .append("</p><pre>");
        for (Event e : Checker.excerpt(a, v, EXCERPT)) {
          h.append(esc(e.describe())).append('\n');
        }
        h.append("</pre>");
      }
    }
    h.append("<p class=\"sub\">history.jsonl holds every event; clients/ and the backend's directories hold the "
        + "processes' logs.</p></body></html>");
    return h.toString();
  }

  private static void legend(StringBuilder h) {
    h.append("<p class=\"legend\"><span><i class=\"sw\" style=\"background:hsl(210,60%,70%)\"></i>a lease: from its "
        + "grant to its release, loss or its client's death (token on it; a colour per client)</span>"
        + "<span><i class=\"sw\" style=\"background:repeating-linear-gradient(45deg,#fff 0 3px,#bbb 3px 6px)\"></i>"
        + "the part a paused client reported on waking</span>"
        + "<span style=\"color:#c00\">✕ lost (onLost)</span><span style=\"color:#e67e00\">▲ stale write rejected</span>"
        + "<span>| write accepted</span><span style=\"color:#c00\">● violation of a promise</span>"
        + "<span style=\"color:#e6a100\">● violation of what the provider does not promise</span>"
        + "<span><i class=\"sw\" style=\"background:rgba(66,133,244,.18)\"></i>client fault</span>"
        + "<span><i class=\"sw\" style=\"background:rgba(219,68,55,.18)\"></i>server fault</span></p>");
  }

  private static long end(Analysis a) {
    return a.events().isEmpty() ? 0 : a.events().getLast().at();
  }

  /** A timeline SVG at {@code pxPerSec}; with {@code detail}, writes and token labels too. */
  private static void timeline(StringBuilder h, Analysis a, double pxPerSec, boolean detail) {
    long endMs = end(a);
    int left = 60;
    double width = left + endMs / 1000.0 * pxPerSec + 20;
    int lane = detail ? 16 : 6;
    int top = 22;
    Map<String, List<Lease>> byName = new TreeMap<>();
    for (Lease l : a.leases()) {
      byName.computeIfAbsent(l.name(), k -> new ArrayList<>()).add(l);
    }
    for (Event e : a.events()) {
      if (e.type() == Event.Type.INVOKE && e.name() != null) {
        byName.computeIfAbsent(e.name(), k -> new ArrayList<>());
      }
    }
    Map<String, Integer> clientIndex = new LinkedHashMap<>();
    for (Event e : a.events()) {
      if (e.type() == Event.Type.SPAWN) {
        clientIndex.putIfAbsent(e.client(), clientIndex.size());
      }
    }
    Map<String, Map<String, Integer>> lanes = new LinkedHashMap<>();
    int y = top;
    Map<String, Integer> bandTop = new LinkedHashMap<>();
    for (Map.Entry<String, List<Lease>> e : byName.entrySet()) {
      Map<String, Integer> mine = new LinkedHashMap<>();
      for (Lease l : e.getValue()) {
        mine.putIfAbsent(l.client(), mine.size());
      }
      lanes.put(e.getKey(), mine);
      bandTop.put(e.getKey(), y);
      y += Math.max(1, mine.size()) * lane + 14;
    }
    int height = y + 6;
    h.append("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"").append(fmt(width)).append("\" height=\"")
        .append(height).append("\">");
    // time axis
    int step = pxPerSec >= 30 ? 1 : pxPerSec >= 8 ? 5 : pxPerSec >= 3 ? 10 : 30;
    for (long s = 0; s * 1000 <= endMs; s += step) {
      double x = left + s * pxPerSec;
      h.append("<line x1=\"").append(fmt(x)).append("\" y1=\"").append(top - 4).append("\" x2=\"").append(fmt(x))
          .append("\" y2=\"").append(height - 4).append("\" stroke=\"#eee\"/>");
      if (s % (step * (pxPerSec >= 30 ? 5 : 1)) == 0 || step > 1) {
        h.append("<text x=\"").append(fmt(x + 2)).append("\" y=\"12\" fill=\"#888\">").append(s).append("s</text>");
      }
    }
    // fault windows, behind everything; a window's label only where it does not run into the one before (every window
    // keeps its shading and its hover title)
    double labelEnd = Double.NEGATIVE_INFINITY;
    List<FaultWindow> byStart = new ArrayList<>(a.faults());
    byStart.sort(Comparator.comparingLong(w -> w.start().at()));
    for (FaultWindow w : byStart) {
      double x1 = left + w.start().at() / 1000.0 * pxPerSec;
      double x2 = left + w.end().at() / 1000.0 * pxPerSec;
      String fill = w.server() ? "rgba(219,68,55,.18)" : "rgba(66,133,244,.18)";
      h.append("<rect x=\"").append(fmt(x1)).append("\" y=\"").append(top - 6).append("\" width=\"")
          .append(fmt(Math.max(2, x2 - x1))).append("\" height=\"").append(height - top).append("\" fill=\"")
          .append(fill).append("\"><title>").append(esc(w.label() + ": " + sec(w.start().at()) + " to "
              + sec(w.end().at()) + (w.end().detail() != null ? " (" + w.end().detail() + ")" : ""))).append("</title></rect>");
      String text = w.kind() + (detail && w.target() != null ? " " + w.target() : "");
      if ((x2 - x1 > 30 || !detail) && x1 >= labelEnd) {
        h.append("<text x=\"").append(fmt(x1 + 2)).append("\" y=\"").append(height - 6).append("\" fill=\"")
            .append(w.server() ? "#a33" : "#2a5db0").append("\">").append(esc(text)).append("</text>");
        labelEnd = x1 + 2 + text.length() * 6.5 + 4; // about the width of the report's 11 px sans-serif
      }
    }
    // bands
    for (Map.Entry<String, List<Lease>> e : byName.entrySet()) {
      String name = e.getKey();
      int by = bandTop.get(name);
      Map<String, Integer> mine = lanes.get(name);
      int bh = Math.max(1, mine.size()) * lane;
      h.append("<text x=\"4\" y=\"").append(by + Math.min(bh, 14) - 2).append("\" font-weight=\"600\">")
          .append(esc(name)).append("</text>");
      h.append("<line x1=\"").append(left).append("\" y1=\"").append(by + bh + 6).append("\" x2=\"")
          .append(fmt(width)).append("\" y2=\"").append(by + bh + 6).append("\" stroke=\"#ccc\"/>");
      if (detail) {
        for (Map.Entry<String, Integer> ln : mine.entrySet()) {
          h.append("<text x=\"34\" y=\"").append(by + ln.getValue() * lane + lane - 4).append("\" fill=\"#777\">")
              .append(esc(ln.getKey())).append("</text>");
        }
      }
      for (Lease l : e.getValue()) {
        int ly = by + mine.get(l.client()) * lane;
        double x1 = left + l.start().at() / 1000.0 * pxPerSec;
        Event effective = l.endedInPause() ? pauseStart(a, l) : l.end();
        double x2 = left + effective.at() / 1000.0 * pxPerSec;
        double x3 = left + l.end().at() / 1000.0 * pxPerSec;
        int hue = (int) ((clientIndex.getOrDefault(l.client(), 0) * 137.5) % 360);
        h.append("<rect x=\"").append(fmt(x1)).append("\" y=\"").append(ly + 1).append("\" width=\"")
            .append(fmt(Math.max(1, x2 - x1))).append("\" height=\"").append(lane - 2).append("\" fill=\"hsl(")
            .append(hue).append(",60%,70%)\" stroke=\"hsl(").append(hue).append(",50%,40%)\" stroke-width=\"")
            .append(detail ? "0.6" : "0").append("\"><title>").append(esc(l.client() + " lease #" + l.start().grant()
                + " token " + l.token() + ": granted " + sec(l.start().at()) + ", " + l.how() + " " + sec(l.end().at())))
            .append("</title></rect>");
        if (x3 > x2 + 1) {
          h.append("<rect x=\"").append(fmt(x2)).append("\" y=\"").append(ly + 1).append("\" width=\"")
              .append(fmt(x3 - x2)).append("\" height=\"").append(lane - 2)
              .append("\" fill=\"none\" stroke=\"#999\" stroke-dasharray=\"3,2\"><title>")
              .append(esc(l.client() + " was paused; it reported the loss on waking, at " + sec(l.end().at())))
              .append("</title></rect>");
        }
        if (detail && x2 - x1 > 8 * Long.toString(l.token()).length()) {
          h.append("<text x=\"").append(fmt(x1 + 2)).append("\" y=\"").append(ly + lane - 4).append("\">")
              .append(l.token()).append("</text>");
        }
        if (l.lost() != null) {
          double xl = left + l.lost().at() / 1000.0 * pxPerSec;
          h.append("<text x=\"").append(fmt(xl - 4)).append("\" y=\"").append(ly + lane - 3)
              .append("\" fill=\"#c00\" font-weight=\"700\">✕<title>").append(esc(l.client() + " lost token " + l.token()
                  + " at " + sec(l.lost().at()) + ": " + l.lost().detail())).append("</title></text>");
        }
      }
    }
    // writes and stale writes
    for (Event e : a.events()) {
      if ((e.type() != Event.Type.STALE && !(detail && e.type() == Event.Type.WRITE)) || !bandTop.containsKey(e.name())) {
        continue;
      }
      Integer laneOf = lanes.get(e.name()).get(e.client());
      int ly = bandTop.get(e.name()) + (laneOf == null ? 0 : laneOf) * lane;
      double x = left + e.at() / 1000.0 * pxPerSec;
      if (e.type() == Event.Type.WRITE) {
        h.append("<line x1=\"").append(fmt(x)).append("\" y1=\"").append(ly + lane - 4).append("\" x2=\"").append(fmt(x))
            .append("\" y2=\"").append(ly + lane - 1).append("\" stroke=\"#333\"/>");
      } else {
        h.append("<path d=\"M").append(fmt(x)).append(',').append(ly).append(" l4,").append(lane - 2).append(" h-8z\" "
            + "fill=\"#e67e00\"><title>").append(esc(e.client() + "'s write with token " + e.token() + " rejected at "
            + sec(e.at()) + ": the register had accepted " + e.highest())).append("</title></path>");
      }
    }
    // violations
    int n = 0;
    for (Violation v : a.violations()) {
      if (!bandTop.containsKey(v.name()) || v.seqs().size() < 2) {
        continue;
      }
      Event at = a.events().stream().filter(e -> e.seq() == v.seqs().get(1)).findFirst().orElse(null);
      if (at == null) {
        continue;
      }
      n++;
      double x = left + at.at() / 1000.0 * pxPerSec;
      int cy = bandTop.get(v.name()) - 4;
      h.append("<a href=\"#").append(v.kind().label()).append("\"><circle cx=\"").append(fmt(x)).append("\" cy=\"")
          .append(cy).append("\" r=\"").append(detail ? 4 : 3).append("\" fill=\"").append(v.promised() ? "#c00" : "#e6a100")
          .append("\"><title>").append(esc(v.kind().label() + (v.promised() ? "" : " (not promised)") + ": "
              + v.summary())).append("</title></circle></a>");
    }
    h.append("</svg>");
  }

  private static Event pauseStart(Analysis a, Lease l) {
    for (FaultWindow w : a.faults()) {
      if (w.kind().equals("pause") && l.client().equals(w.target()) && w.start().seq() <= l.end().seq()
          && w.end().seq() >= l.start().seq()) {
        return w.start().seq() < l.start().seq() ? l.start() : w.start();
      }
    }
    return l.end();
  }

  private static String sec(long ms) {
    return String.format(Locale.ROOT, "%.3fs", ms / 1000.0);
  }

  private static String fmt(double d) {
    return String.format(Locale.ROOT, "%.1f", d);
  }

  private static String td(Object o) {
    return "<td class=\"n\">" + esc(String.valueOf(o)) + "</td>";
  }

  static String esc(String s) {
    if (s == null) {
      return "";
    }
    StringBuilder b = new StringBuilder(s.length());
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '<' -> b.append("&lt;");
        case '>' -> b.append("&gt;");
        case '&' -> b.append("&amp;");
        case '"' -> b.append("&quot;");
        default -> b.append(c);
      }
    }
    return b.toString();
  }
}
