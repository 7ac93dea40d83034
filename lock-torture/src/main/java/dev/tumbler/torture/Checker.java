package dev.tumbler.torture;

import dev.tumbler.torture.Event.Type;
import dev.tumbler.torture.Violation.Kind;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Judges a torture run from its history alone (Jepsen's rule: the checker reads only the history). The order of
 * "before" is the register's sequence numbers; the bounds are those the history's {@code run} event carries; what
 * the provider promises is what its clients said in their {@code hello} (its capabilities).
 *
 * <p><b>Leases.</b> A lease is one grant, (client, grant number). It is valid, in the history's terms, from its
 * {@code grant} event until the first of: its {@code lost} event, its {@code release} event (sent before the client
 * calls {@code release()}), a {@code kill} fault on its client, or its client's {@code exit}. A paused client cannot
 * act or report: if its {@code lost} (or its {@code release}: a client may reach its release before its renewer
 * notices the loss) arrives within the wake slack after the pause ended, the lease counts as ended when the pause
 * began. A pause lasts longer than a lease term, so the lease ran out by the client's own clock during it; the cut at
 * the pause's start may hide a grant to another in the first part of the pause, which the same bug would show
 * without pauses; fencing is what protects the resource from the write the client may still send as it wakes. So
 * does a grant the client reports only on waking, within the slack, for an acquire it invoked before it stopped (before
 * the pause's end was recorded: the {@code kill -STOP} takes effect some time after the recorded start, and a stopped
 * client sends nothing), when its end follows within the slack too: it was granted before the pause and lived in it,
 * and is judged neither for exclusion nor for its token's order. A lease still open at the end of the history lasts to its end.
 *
 * <p><b>The classes</b> ({@link Kind}):
 * <ul>
 *   <li>safety: the register accepted a write of a grant after it had accepted a write of another grant of the
 *       name that came after this grant's earlier write (interleaved writes, the stale one accepted). With fencing
 *       tokens strictly increasing this cannot happen: the register rejects the lower token. Every rejected write is
 *       counted as a stale write that fencing stopped;
 *   <li>lease-exclusion: a grant while another client's lease of the name was valid, with the faults in its window
 *       as its causes: from the first of the two acquires to the later grant, every server fault (and one that ended
 *       less than the target's allowance before: a backend settles after a fault) and the client faults on the two
 *       clients;
 *   <li>lost-notification: of those, the ones where the earlier lease ended by its {@code lost} event, and the new
 *       holder's first write came before it;
 *   <li>token-order: a grant whose token is not above the previous grant's of the name (grants whose lease lived
 *       entirely inside a pause of their client are left out: they are reported only when the client wakes). Where
 *       the two leases overlapped and that overlap is a lease exclusion nothing promises, it is not counted against
 *       {@code FENCING} either: two servers granting at once in a failover order their tokens by when each decided,
 *       which the order their clients reported the grants in need not follow;
 *   <li>wait-bound: an acquire that returned (or never returned) more than {@code maxWait} plus the slack after it
 *       was invoked, its client not paused meanwhile;
 *   <li>recovery: a name asked for after a fault healed and not granted within the recovery bound, before the next
 *       fault began.
 * </ul>
 *
 * <p><b>Promises.</b> Safety and token order are promised by {@code FENCING}. Lease exclusion and lost notification
 * are promised by {@code MUTEX} without faults, by {@code LOST_NOTIFICATION} with a client fault in the window, and by
 * {@code LOST_NOTIFICATION} and {@code FAULT_TOLERANT} together with a server fault in it. Waits are promised by the
 * API ({@code tryAcquire} returns by {@code maxWait} plus 2 s), recovery by the bound the run documents. A violation
 * nothing promises is reported, not counted against the provider.
 */
public final class Checker {
  private final List<Event> events;
  private final RunParameters run;
  private final Set<String> capabilities = new TreeSet<>();
  private String provider = "?";
  private final Map<String, Lease> leases = new LinkedHashMap<>();
  private final List<FaultWindow> faults = new ArrayList<>();
  private final List<Violation> violations = new ArrayList<>();

  private Checker(List<Event> events) {
    if (events.isEmpty() || events.getFirst().type() != Type.RUN) {
      throw new IllegalArgumentException("a history starts with its run event");
    }
    this.events = List.copyOf(events);
    this.run = RunParameters.parse(events.getFirst().detail());
  }

  /** Checks {@code history} (its events in order, the {@code run} event first). */
  public static Analysis check(List<Event> history) {
    Checker c = new Checker(history);
    c.index();
    c.checkSafety();
    c.checkLeases();
    c.checkTokens();
    c.checkWaits();
    c.checkRecovery();
    return new Analysis(c.run, c.provider, Set.copyOf(c.capabilities), c.events, List.copyOf(c.leases.values()),
        List.copyOf(c.faults), List.copyOf(c.violations), c.counts());
  }

  /** A lease as the history shows it: when it began and ended (register order and time), and how it ended. */
  public static final class Lease {
    final String client;
    final String name;
    final long token;
    final long grant;
    final Event start;
    Event end;
    String how = "open";
    Event lost;
    Event firstWrite;
    /** The client's acquire this grant answered. */
    Event invoke;
    /** The end that counts: the end, or the start of the pause it ran out in. */
    Event effectiveEnd;
    boolean livedInPause;

    Lease(Event grantEvent) {
      this.client = grantEvent.client();
      this.name = grantEvent.name();
      this.token = grantEvent.token() == null ? 0 : grantEvent.token();
      this.grant = grantEvent.grant() == null ? 0 : grantEvent.grant();
      this.start = grantEvent;
    }

    public String client() {
      return client;
    }

    public String name() {
      return name;
    }

    public long token() {
      return token;
    }

    /** The {@code grant} event. */
    public Event start() {
      return start;
    }

    /** The event that ended it (or the history's last event, if it never ended). */
    public Event end() {
      return end;
    }

    /** {@code released}, {@code lost}, {@code killed}, {@code exited}, or {@code open}. */
    public String how() {
      return how;
    }

    /** Its {@code lost} event, or null. */
    public Event lost() {
      return lost;
    }

    /** Whether it counts as ended when its client's pause began (its loss reported on waking). */
    public boolean endedInPause() {
      return effectiveEnd != end;
    }

    String key() {
      return client + "#" + grant;
    }

    String describe() {
      return client + "'s lease #" + grant + " (token " + token + ", granted at seq " + start.seq() + ")";
    }
  }

  /** A fault from its start to its end (or to the end of the history). */
  public record FaultWindow(String kind, long id, String target, Event start, Event end) {
    public boolean server() {
      return Fault.isServer(kind);
    }

    String label() {
      return kind + " #" + id + (target == null ? "" : " on " + target);
    }
  }

  /** Everything the checker found, for the report. */
  public record Analysis(RunParameters run, String provider, Set<String> capabilities, List<Event> events,
      List<Lease> leases, List<FaultWindow> faults, List<Violation> violations, Map<String, Long> counts) {

    /** The violations of {@code kind}. */
    public List<Violation> of(Kind kind) {
      return violations.stream().filter(v -> v.kind() == kind).toList();
    }

    /** Violations of a promise in a safety class: the run failed. */
    public long promisedSafetyViolations() {
      return violations.stream().filter(v -> v.promised() && v.kind().safety()).count();
    }

    /** Violations of a promised bound on waits or recovery. */
    public long promisedLivenessViolations() {
      return violations.stream().filter(v -> v.promised() && !v.kind().safety()).count();
    }

    /** How many writes the register rejected as stale: how often fencing saved the resource. */
    public long staleWrites() {
      return counts.getOrDefault("stale", 0L);
    }
  }

  private void index() {
    Map<String, Map<String, Lease>> open = new HashMap<>();
    Map<Long, FaultWindow> openFaults = new LinkedHashMap<>();
    Map<String, Event> invoked = new HashMap<>();
    for (Event e : events) {
      switch (e.type()) {
        case INVOKE -> invoked.put(e.client(), e);
        case HELLO -> {
          if (e.detail() != null) {
            for (String part : e.detail().split(";")) {
              if (part.startsWith("capabilities=") && part.length() > 13) {
                capabilities.addAll(List.of(part.substring(13).split(",")));
              } else if (part.startsWith("provider=")) {
                provider = part.substring(9);
              }
            }
          }
        }
        case GRANT -> {
          Lease l = new Lease(e);
          l.invoke = invoked.get(e.client());
          leases.put(l.key(), l);
          open.computeIfAbsent(l.client, k -> new LinkedHashMap<>()).put(l.key(), l);
        }
        case LOST -> {
          Lease l = leases.get(e.lease());
          if (l != null) {
            if (l.lost == null) {
              l.lost = e;
            }
            end(open, l, e, "lost");
          }
        }
        case RELEASE -> {
          Lease l = leases.get(e.lease());
          if (l != null) {
            end(open, l, e, "released");
          }
        }
        case WRITE, STALE -> {
          Lease l = leases.get(e.lease());
          if (l != null && l.firstWrite == null) {
            l.firstWrite = e;
          }
        }
        case EXIT -> endAll(open, e.client(), e, "exited");
        case FAULT_START -> {
          openFaults.put(e.id(), new FaultWindow(e.fault(), e.id(), e.target(), e, null));
          if ("kill".equals(e.fault())) {
            endAll(open, e.target(), e, "killed");
          }
        }
        case FAULT_END -> {
          FaultWindow w = openFaults.remove(e.id());
          if (w != null) {
            faults.add(new FaultWindow(w.kind(), w.id(), w.target(), w.start(), e));
          }
        }
        default -> { }
      }
    }
    Event last = events.getLast();
    for (FaultWindow w : openFaults.values()) {
      faults.add(new FaultWindow(w.kind(), w.id(), w.target(), w.start(), last));
    }
    faults.sort((a, b) -> Long.compare(a.start().seq(), b.start().seq()));
    for (Lease l : leases.values()) {
      if (l.end == null) {
        l.end = last;
      }
      l.effectiveEnd = l.end;
      if (l.how.equals("lost") || l.how.equals("released")) {
        for (FaultWindow w : faults) {
          if (!w.kind().equals("pause") || !l.client.equals(w.target())) {
            continue;
          }
          long slack = run.wakeSlackMillis();
          boolean lostOnWaking = l.end.seq() > w.end().seq() && l.end.at() - w.end().at() <= slack;
          // granted before the wake, or reported on waking for an acquire invoked before the client stopped: before
          // the pause's end was recorded, since a stopped client sends nothing and its end is recorded before SIGCONT
          // (the stop itself takes effect some time after the recorded start: kill -STOP is a process of its own,
          // seen 150 ms late on a loaded machine)
          boolean heldInPause = l.start.seq() < w.end().seq() || l.start.at() - w.end().at() <= slack
              && l.invoke != null && l.invoke.seq() < w.end().seq();
          if (lostOnWaking && heldInPause) {
            l.effectiveEnd = w.start();
            l.livedInPause = l.start.seq() > w.start().seq();
            break;
          }
        }
      }
    }
  }

  private static void end(Map<String, Map<String, Lease>> open, Lease l, Event e, String how) {
    if (l.end == null) {
      l.end = e;
      l.how = how;
      Map<String, Lease> mine = open.get(l.client);
      if (mine != null) {
        mine.remove(l.key());
      }
    }
  }

  private static void endAll(Map<String, Map<String, Lease>> open, String client, Event e, String how) {
    Map<String, Lease> mine = open.get(client);
    if (mine == null) {
      return;
    }
    for (Lease l : List.copyOf(mine.values())) {
      end(open, l, e, how);
    }
  }

  // ---- safety: interleaved accepted writes

  private void checkSafety() {
    boolean promised = capabilities.contains("FENCING");
    String promise = promised ? "FENCING" : "FENCING not declared";
    Map<String, String> lastWriter = new HashMap<>();
    Map<String, Map<String, Event>> overtaken = new HashMap<>();
    Set<String> reported = new HashSet<>();
    for (Event e : events) {
      if (e.type() != Type.WRITE) {
        continue;
      }
      String lease = e.lease();
      Map<String, Event> closed = overtaken.computeIfAbsent(e.name(), k -> new HashMap<>());
      Event by = closed.get(lease);
      if (by != null && reported.add(lease + ">" + by.lease())) {
        Lease mine = leases.get(lease);
        Event first = mine != null ? mine.firstWrite : e;
        violations.add(new Violation(Kind.SAFETY, e.name(), "the register accepted a write of " + e.client()
            + "'s lease #" + e.grant() + " (token " + e.token() + ") at seq " + e.seq() + " after it had accepted one of "
            + by.client() + "'s lease #" + by.grant() + " (token " + by.token() + ") at seq " + by.seq()
            + ", which came after this lease's own write: the two holders' writes interleaved",
            List.of(first.seq(), by.seq(), e.seq()), causes(first, e, who(e.client(), by.client())),
            promised, promise));
      }
      String prev = lastWriter.get(e.name());
      if (prev != null && !prev.equals(lease)) {
        closed.putIfAbsent(prev, e);
      }
      lastWriter.put(e.name(), lease);
    }
  }

  // ---- lease exclusion and lost notification

  private void checkLeases() {
    boolean lostNotification = capabilities.contains("LOST_NOTIFICATION");
    boolean faultTolerant = capabilities.contains("FAULT_TOLERANT");
    Map<String, List<Lease>> byName = new TreeMap<>();
    for (Lease l : leases.values()) {
      byName.computeIfAbsent(l.name, k -> new ArrayList<>()).add(l);
    }
    for (List<Lease> list : byName.values()) {
      List<Lease> active = new ArrayList<>();
      for (Lease b : list) {
        active.removeIf(a -> a.effectiveEnd.seq() <= b.start.seq());
        if (b.livedInPause) {
          continue;
        }
        for (Lease a : active) {
          if (a.client.equals(b.client)) {
            continue;
          }
          Exclusion x = exclusion(a, b);
          boolean server = x.server();
          List<String> causes = x.causes();
          boolean promised = x.promised();
          String promise = x.promise();
          String ended = a.how.equals("open") ? "was never released or lost before the run ended"
              : "ended later, at seq " + a.effectiveEnd.seq() + " (" + a.how + ")";
          violations.add(new Violation(Kind.LEASE_EXCLUSION, b.name, b.client + " was granted at seq "
              + b.start.seq() + " (token " + b.token + ") while " + a.describe() + " was still valid: it " + ended,
              List.of(a.start.seq(), b.start.seq(), a.effectiveEnd.seq()), causes, promised, promise));
          if (a.how.equals("lost") && !a.endedInPause() && b.firstWrite != null
              && b.firstWrite.seq() < a.lost.seq()) {
            violations.add(new Violation(Kind.LOST_NOTIFICATION, b.name, b.client + " (token " + b.token
                + ", granted at seq " + b.start.seq() + ") wrote at seq " + b.firstWrite.seq() + " before "
                + a.describe() + " heard it lost, at seq " + a.lost.seq() + " (" + a.lost.detail() + ")",
                List.of(a.start.seq(), b.start.seq(), b.firstWrite.seq(), a.lost.seq()), causes,
                promise(server, lostNotification, faultTolerant), promiseText(server, lostNotification,
                faultTolerant)));
          }
        }
        active.add(b);
      }
    }
  }

  /** What a grant {@code b} made while {@code a} was still valid amounts to: its causes, and whether it is promised. */
  private record Exclusion(boolean server, List<String> causes, boolean promised, String promise) {}

  private Exclusion exclusion(Lease a, Lease b) {
    boolean mutex = capabilities.contains("MUTEX");
    boolean lostNotification = capabilities.contains("LOST_NOTIFICATION");
    boolean expiry = capabilities.contains("LEASE_EXPIRY");
    boolean faultTolerant = capabilities.contains("FAULT_TOLERANT");
    // either grant may have been made any time after its acquire was invoked
    Event from = a.start;
    for (Event inv : new Event[] {a.invoke, b.invoke}) {
      if (inv != null && inv.seq() < from.seq()) {
        from = inv;
      }
    }
    List<FaultWindow> inWindow = windows(from, b.start, who(a.client, b.client));
    boolean server = inWindow.stream().anyMatch(FaultWindow::server);
    List<String> causes = inWindow.stream().map(FaultWindow::label).toList();
    if (inWindow.isEmpty()) {
      boolean promised = mutex && (lostNotification || !expiry);
      return new Exclusion(false, causes, promised, promised ? (expiry ? "MUTEX and LOST_NOTIFICATION"
          : "MUTEX, without lease expiry") + " (no fault in the window)"
          : "MUTEX with LOST_NOTIFICATION (or without LEASE_EXPIRY) not declared");
    }
    return new Exclusion(server, causes, promise(server, lostNotification, faultTolerant),
        promiseText(server, lostNotification, faultTolerant));
  }

  /** Whether a holder is promised to hear of its loss before another grant, with a server fault in the window or not. */
  private static boolean promise(boolean server, boolean lostNotification, boolean faultTolerant) {
    return lostNotification && (!server || faultTolerant);
  }

  private static String promiseText(boolean server, boolean lostNotification, boolean faultTolerant) {
    if (promise(server, lostNotification, faultTolerant)) {
      return server ? "LOST_NOTIFICATION and FAULT_TOLERANT (a server fault in the window)" : "LOST_NOTIFICATION";
    }
    if (!server) {
      return "LOST_NOTIFICATION not declared: a holder may hear of its loss after another is granted";
    }
    return (lostNotification ? "FAULT_TOLERANT" : faultTolerant ? "LOST_NOTIFICATION"
        : "LOST_NOTIFICATION and FAULT_TOLERANT") + " not declared: a server fault may free a lock before its holder"
        + " knows";
  }

  // ---- token order

  private void checkTokens() {
    boolean promised = capabilities.contains("FENCING");
    String promise = promised ? "FENCING" : "FENCING not declared";
    Map<String, Lease> previous = new HashMap<>();
    for (Lease l : leases.values()) {
      if (l.livedInPause) {
        continue;
      }
      Lease p = previous.put(l.name, l);
      if (p != null && l.token <= p.token) {
        boolean kept = promised;
        String why = promise;
        if (promised && !p.client.equals(l.client) && p.effectiveEnd.seq() > l.start.seq()) {
          // the two leases overlapped: where that overlap is a lease exclusion nothing promises (two servers granting
          // at once in a failover), the grants' order as their clients reported it is not the order the servers
          // decided them in, which is the order their tokens follow
          Exclusion x = exclusion(p, l);
          if (!x.promised()) {
            kept = false;
            why = "not an order: the two grants overlapped, and that lease exclusion is not promised (" + x.promise()
                + "); tokens follow the order the servers decided the grants in, not the order their clients "
                + "reported them";
          }
        }
        violations.add(new Violation(Kind.TOKEN_ORDER, l.name, l.client + " was granted token " + l.token + " at seq "
            + l.start.seq() + ", not above token " + p.token + " of the grant before it (" + p.describe() + ")",
            List.of(p.start.seq(), l.start.seq()), causes(p.start, l.start, who(p.client, l.client)), kept, why));
      }
    }
  }

  // ---- waits

  private void checkWaits() {
    long bound = run.maxWaitMillis() + run.waitSlackMillis();
    String promise = "Lock.tryAcquire returns by maxWait (" + run.maxWaitMillis() + " ms) plus "
        + run.waitSlackMillis() + " ms";
    Map<String, Event> invoked = new HashMap<>();
    Set<String> killed = new HashSet<>();
    for (Event e : events) {
      switch (e.type()) {
        case INVOKE -> invoked.put(e.client(), e);
        case GRANT, TIMEOUT, FAIL -> {
          Event inv = invoked.remove(e.client());
          if (e.millis() != null && e.millis() > bound && !pausedBetween(e.client(), inv, e)) {
            violations.add(new Violation(Kind.WAIT_BOUND, e.name(), e.client() + "'s acquire of " + e.name()
                + " returned (" + e.type().wire() + ") after " + e.millis() + " ms, past the bound of " + bound + " ms",
                inv == null ? List.of(e.seq()) : List.of(inv.seq(), e.seq()), causes(inv == null ? e : inv, e,
                who(e.client())), true, promise));
          }
        }
        case FAULT_START -> {
          if ("kill".equals(e.fault())) {
            killed.add(e.target());
            invoked.remove(e.target());
          }
        }
        case EXIT -> {
          Event inv = invoked.remove(e.client());
          if (inv != null && !killed.contains(e.client()) && e.at() - inv.at() > bound
              && !pausedBetween(e.client(), inv, e)) {
            violations.add(new Violation(Kind.WAIT_BOUND, inv.name(), e.client() + "'s acquire of " + inv.name()
                + " invoked at seq " + inv.seq() + " never returned: the process ended " + (e.at() - inv.at())
                + " ms later, past the bound of " + bound + " ms", List.of(inv.seq(), e.seq()),
                causes(inv, e, who(e.client())), true, promise));
          }
        }
        default -> { }
      }
    }
  }

  private boolean pausedBetween(String client, Event from, Event to) {
    long a = from == null ? 0 : from.seq();
    for (FaultWindow w : faults) {
      if (w.kind().equals("pause") && client.equals(w.target()) && w.start().seq() < to.seq() && w.end().seq() > a) {
        return true;
      }
    }
    return false;
  }

  // ---- recovery after a fault

  private void checkRecovery() {
    long bound = run.recoveryMillis();
    String promise = "the recovery bound of this run (" + bound + " ms)";
    Event stopping = events.stream().filter(e -> e.type() == Type.BYE).findFirst().orElse(events.getLast());
    Set<String> names = new TreeSet<>();
    for (Event e : events) {
      if (e.type() == Type.INVOKE && e.name() != null) {
        names.add(e.name());
      }
    }
    for (FaultWindow w : faults) {
      Event healed = w.end();
      Event until = stopping;
      for (FaultWindow next : faults) {
        if (next.start().seq() > healed.seq() && next.start().seq() < until.seq()) {
          until = next.start();
        }
      }
      if (until.seq() <= healed.seq()) {
        continue;
      }
      for (String n : names) {
        Event demand = demandAfter(events, n, healed, until);
        if (demand == null) {
          continue;
        }
        Event granted = null;
        for (Event e : events.subList(indexOf(events, healed), events.size())) {
          if (e.seq() > until.seq()) {
            break;
          }
          if (e.type() == Type.GRANT && n.equals(e.name())) {
            granted = e;
            break;
          }
        }
        long from = Math.max(demand.at(), healed.at());
        if (granted != null) {
          if (granted.at() - from > bound) {
            violations.add(new Violation(Kind.RECOVERY, n, n + " was granted " + (granted.at() - from) + " ms after "
                + w.label() + " healed (seq " + healed.seq() + ") and it was asked for, past the recovery bound of "
                + bound + " ms", List.of(healed.seq(), Math.max(demand.seq(), healed.seq()), granted.seq()),
                List.of(w.label()), true, promise));
          }
        } else if (until.at() - from > bound) {
          violations.add(new Violation(Kind.RECOVERY, n, n + " was not granted for " + (until.at() - from)
              + " ms after " + w.label() + " healed (seq " + healed.seq() + ") although asked for, up to seq "
              + until.seq() + ", past the recovery bound of " + bound + " ms",
              List.of(healed.seq(), Math.max(demand.seq(), healed.seq()), until.seq()), List.of(w.label()), true,
              promise));
        }
      }
    }
  }

  /**
   * The acquire of {@code n} that was pending when {@code healed} came (the earliest), else the first one invoked
   * after it and before {@code until}; null if nobody asked. The run uses the same rule to wait long enough after the
   * last fault for the check to be decided.
   */
  static Event demandAfter(List<Event> events, String n, Event healed, Event until) {
    Map<String, Event> pending = new LinkedHashMap<>();
    for (Event e : events) {
      if (e.seq() > healed.seq()) {
        break;
      }
      switch (e.type()) {
        case INVOKE -> {
          if (n.equals(e.name())) {
            pending.put(e.client(), e);
          } else {
            pending.remove(e.client());
          }
        }
        case GRANT, TIMEOUT, FAIL, EXIT -> pending.remove(e.client());
        case FAULT_START -> {
          if ("kill".equals(e.fault())) {
            pending.remove(e.target());
          }
        }
        default -> { }
      }
    }
    if (!pending.isEmpty()) {
      return pending.values().stream().min((x, y) -> Long.compare(x.seq(), y.seq())).orElseThrow();
    }
    for (Event e : events.subList(indexOf(events, healed), events.size())) {
      if (e.seq() > until.seq()) {
        break;
      }
      if (e.type() == Type.INVOKE && n.equals(e.name())) {
        return e;
      }
    }
    return null;
  }

  private static int indexOf(List<Event> events, Event e) {
    int lo = 0;
    int hi = events.size() - 1;
    while (lo <= hi) {
      int mid = (lo + hi) >>> 1;
      long s = events.get(mid).seq();
      if (s < e.seq()) {
        lo = mid + 1;
      } else if (s > e.seq()) {
        hi = mid - 1;
      } else {
        return mid;
      }
    }
    return lo;
  }

  // ---- helpers

  /**
   * The faults that can have a part in what happened to {@code clients} between {@code from} and {@code to}: every
   * server fault whose window meets that span or ended less than the target's allowance before it (a backend goes on
   * settling after a fault: a stale primary resumes, sentinels reconfigure it), and the client faults on one of them
   * whose window meets it (a pause of a bystander is not a cause).
   */
  private List<FaultWindow> windows(Event from, Event to, Set<String> clients) {
    List<FaultWindow> out = new ArrayList<>();
    for (FaultWindow w : faults) {
      if (w.start().seq() > to.seq()) {
        continue;
      }
      boolean meets = w.end().seq() >= from.seq();
      if (w.server() ? meets || from.at() - w.end().at() <= run.allowanceMillis() : meets && clients.contains(w.target())) {
        out.add(w);
      }
    }
    return out;
  }

  private static Set<String> who(String... clients) {
    return new HashSet<>(java.util.Arrays.asList(clients));
  }

  private List<String> causes(Event from, Event to, Set<String> clients) {
    return windows(from, to, clients).stream().map(FaultWindow::label).toList();
  }

  private Map<String, Long> counts() {
    Map<String, Long> m = new LinkedHashMap<>();
    EnumMap<Type, Long> byType = new EnumMap<>(Type.class);
    for (Event e : events) {
      byType.merge(e.type(), 1L, Long::sum);
    }
    m.put("acquires", byType.getOrDefault(Type.INVOKE, 0L));
    m.put("grants", byType.getOrDefault(Type.GRANT, 0L));
    m.put("timeouts", byType.getOrDefault(Type.TIMEOUT, 0L));
    m.put("failures", byType.getOrDefault(Type.FAIL, 0L));
    m.put("writes", byType.getOrDefault(Type.WRITE, 0L));
    m.put("stale", byType.getOrDefault(Type.STALE, 0L));
    m.put("lost", byType.getOrDefault(Type.LOST, 0L));
    m.put("releases", byType.getOrDefault(Type.RELEASE, 0L));
    m.put("clients", byType.getOrDefault(Type.SPAWN, 0L));
    m.put("faults", (long) faults.size());
    Map<String, Long> byKind = new TreeMap<>();
    for (FaultWindow w : faults) {
      byKind.merge(w.kind(), 1L, Long::sum);
    }
    for (Map.Entry<String, Long> e : byKind.entrySet()) {
      m.put("fault:" + e.getKey(), e.getValue());
    }
    return m;
  }

  /** The events an example rests on, with what happened to its name and the faults in between (at most {@code max}). */
  public static List<Event> excerpt(Analysis a, Violation v, int max) {
    long from = v.seqs().getFirst();
    long to = v.seqs().getLast();
    Set<Long> keep = new HashSet<>(v.seqs());
    List<Event> inRange = new ArrayList<>();
    for (Event e : a.events()) {
      if (e.seq() < from) {
        continue;
      }
      if (e.seq() > to) {
        break;
      }
      boolean relevant = keep.contains(e.seq()) || e.type() == Type.FAULT_START || e.type() == Type.FAULT_END
          || (v.name().equals(e.name()) && e.type() != Type.INVOKE && e.type() != Type.TIMEOUT);
      if (relevant) {
        inRange.add(e);
      }
    }
    if (inRange.size() <= max) {
      return inRange;
    }
    List<Event> out = new ArrayList<>();
    for (Event e : inRange) {
      if (keep.contains(e.seq()) || e.type() == Type.FAULT_START || e.type() == Type.FAULT_END) {
        out.add(e);
      }
    }
    int room = max - out.size();
    for (Event e : inRange) {
      if (room <= 0) {
        break;
      }
      if (!out.contains(e)) {
        out.add(e);
        room--;
      }
    }
    out.sort((x, y) -> Long.compare(x.seq(), y.seq()));
    return out;
  }
}
