package dev.tumbler.peer.election;

import dev.tumbler.peer.core.Input;
import dev.tumbler.peer.core.Leader;
import dev.tumbler.peer.core.Observation;
import dev.tumbler.peer.core.Output;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.function.Consumer;

/**
 * A seeded random world for {@link ElectionCore}s, and the election's invariants checked after every step.
 *
 * <p>The world: 1–5 nodes, 1 or 3 leaders, priorities drawn from {1, 2, 8, 14, 15}; each node's clock runs at
 * its own rate (within ±0.1% of real time) from its own offset, the same clock across its restarts; messages
 * take 0–5 ms, FIFO per directed link, and are lost when their link breaks. Half the runs report links in
 * line with the data: a link that comes up is reported to its two ends up to 2 ms apart (so a Hello may arrive
 * before its receiver hears the link is up), a break to both ends at once. The other half report them as TCP
 * does: each end hears of every change 0–5 ms later on its own schedule (so a new link's Hello may arrive
 * before its receiver hears the old link broke); a one-way break tells only the end whose outbound
 * connection broke, down and then up, while the other end hears nothing; and the node runtime's send guard
 * drops what a core sends to a peer while a report about that peer is queued for it. For {@link #CHAOS} the
 * world cuts, restores and flaps links, partitions and heals, crashes nodes and restarts them (at least
 * {@link #MIN_RESTART} later, and never the last live node that is informed and knows the highest adopted
 * term — the knowledge E11 keeps in memory only); a nemesis also flaps the link of, or crashes the receiver
 * of, a proposal, vote or view just handled; then every link is restored and every node restarted, and
 * within {@link #BOUND} every node must have adopted one view whose {@code min(leaderCount, n)} leaders are
 * live incarnations and active.
 *
 * <p>After every step: V-1, one leader list per term across all nodes and all time; V-2, when a term is first
 * adopted anywhere, no node that leads a view of an earlier term and is not in the new list is active (its
 * {@code activeUntil}, by its own clock, is past); E6 by distinct senders, the node that first adopts a
 * term (its conductor) has been delivered granted votes for it from a majority of the members, itself
 * included, counted by distinct sender; terms adopted by one incarnation never decrease; only a leader
 * of its view is active; a core sends only over links it was told are up, a Hello first; every message
 * survives the codec.
 */
final class ElectionSimulation {

  static final long MS = 1_000_000;
  /** The simulator's timings of Appendix A; the leader count and priority are set per run and node. */
  static final ElectionSettings TIMINGS = new ElectionSettings(1, 14, 20 * MS, 30 * MS, 8 * MS, 45 * MS, 0);
  /** How long the faults go on. */
  static final long CHAOS = 2_000 * MS;
  /** How long after the last fault healed every node must agree on a view with active leaders. */
  static final long BOUND = 1_000 * MS;
  static final long MAX_DELAY = 5 * MS;
  static final long MAX_UP_SKEW = 2 * MS;
  /** A restart takes longer than any message delay (E11's Hellos rely on it). */
  static final long MIN_RESTART = 10 * MS;
  static final int MAX_DRIFT_PPM = 1_000;
  private static final int[] PRIORITIES = {1, 2, 8, 14, 15};

  private final Consumer<ElectionCore> tweak;

  /** @param tweak applied to every core made (mutations); none for the real thing */
  ElectionSimulation(Consumer<ElectionCore> tweak) {
    this.tweak = tweak;
  }

  /**
   * The outcome of one seed.
   *
   * @param violation what broke, or null
   * @param convergedNanos how long after the heal the view settled (for a run without violation)
   */
  record Result(long seed, String setup, String violation, long convergedNanos, long messages, long terms,
      List<String> trace) {
    boolean ok() {
      return violation == null;
    }
  }

  Result run(long seed, boolean traced) {
    World w = new World(seed, traced);
    String violation = null;
    try {
      w.run();
    } catch (Violation v) {
      violation = v.getMessage() + " at " + ms(w.now);
    } catch (RuntimeException e) {
      violation = "the core threw " + e + " at " + ms(w.now) + " (" + Arrays.toString(e.getStackTrace()) + ")";
    }
    return new Result(seed, w.setup(), violation, w.convergedAt - w.healedAt, w.messages, w.termLeaders.size(),
        w.trace);
  }

  /** Seeds to run: {@code -Delection.seed=S} alone, else 1..N with N from {@code -Delection.seeds=N} or the default. */
  static long[] seeds(int defaultCount) {
    String one = System.getProperty("election.seed");
    if (one != null && !one.isBlank()) {
      return new long[] {Long.parseLong(one.trim())};
    }
    String count = System.getProperty("election.seeds");
    long[] seeds = new long[count == null || count.isBlank() ? defaultCount : Integer.parseInt(count.trim())];
    for (int i = 0; i < seeds.length; i++) {
      seeds[i] = i + 1;
    }
    return seeds;
  }

  /** The command that replays {@code seed} of {@code testClass} and prints its trace. */
  static String replay(String testClass, long seed) {
    return "mvn -B -ntp -o -q -pl lock-provider-native-tests -am test -Dtest=" + testClass
        + " -Delection.seed=" + seed + " -Dsurefire.failIfNoSpecifiedTests=false";
  }

  static String ms(long nanos) {
    return String.format("%.3fms", nanos / 1e6);
  }

  private static final class Violation extends RuntimeException {
    private static final long serialVersionUID = 1L;

    Violation(String message) {
      super(message, null, false, false);
    }
  }

  /** One run: the nodes, their links and clocks, the event queue, and what the checks remember. */
  private final class World {
    final SplittableRandom rng;
    final boolean traced;
    final List<String> trace = new ArrayList<>();
    final int n;
    final int leaderCount;
    final String[] ids;
    final int[] priority;
    final long[] offset;
    final long[] ppm;
    final ElectionCore[] cores;
    final int[] life;
    final long[] crashedAt;
    final boolean[] cut;
    final int[] epoch;
    final boolean[][] believesUp;
    final boolean[][] helloDue;
    /** TCP-like link reports (see the class comment); drawn apart from {@link #rng}. */
    final boolean tcpLike;
    /** Per directed link x ← y: reports to x about y not stepped yet, and when the last one is due. */
    final int[][] reportsQueued;
    final long[][] reportAt;
    /** A one-way break in effect on x → y: its token, or 0. */
    final long[][] oneWay;
    long oneWayTokens;
    final long[][] lastDelivery;
    final int[] timerVersion;
    final Observation.View[] lastView;
    final long[] lastTerm;
    final PriorityQueue<Event> events = new PriorityQueue<>(
        Comparator.comparingLong(Event::at).thenComparingLong(Event::order));
    final ElectionCodec codec = new ElectionCodec();
    final TreeMap<Long, List<Leader>> termLeaders = new TreeMap<>();
    /** The distinct senders of granted votes delivered, per (receiver, its life, term). */
    final Map<List<Long>, Set<Integer>> grantsDelivered = new HashMap<>();
    long maxAdopted;
    long order;
    long now;
    long healedAt = -1;
    long convergedAt = -1;
    long messages;

    World(long seed, boolean traced) {
      this.rng = new SplittableRandom(seed);
      this.traced = traced;
      n = 1 + rng.nextInt(5);
      leaderCount = rng.nextBoolean() ? 3 : 1;
      ids = new String[n];
      priority = new int[n];
      offset = new long[n];
      ppm = new long[n];
      for (int i = 0; i < n; i++) {
        ids[i] = "n" + (i + 1);
        priority[i] = PRIORITIES[rng.nextInt(PRIORITIES.length)];
        offset[i] = rng.nextLong(1_000 * MS, 1_000_000 * MS);
        ppm[i] = rng.nextLong(-MAX_DRIFT_PPM, MAX_DRIFT_PPM + 1);
      }
      cores = new ElectionCore[n];
      life = new int[n];
      crashedAt = new long[n];
      Arrays.fill(crashedAt, Long.MIN_VALUE / 2);
      cut = new boolean[n * n];
      epoch = new int[n * n];
      believesUp = new boolean[n][n];
      helloDue = new boolean[n][n];
      tcpLike = new SplittableRandom(~seed).nextBoolean();
      reportsQueued = new int[n][n];
      reportAt = new long[n][n];
      oneWay = new long[n][n];
      lastDelivery = new long[n][n];
      timerVersion = new int[n];
      lastView = new Observation.View[n];
      lastTerm = new long[n];
    }

    String setup() {
      return "n=" + n + (tcpLike ? " TCP-like" : "") + " leaderCount=" + leaderCount + " priorities="
          + Arrays.toString(priority) + " drift(ppm)=" + Arrays.toString(ppm);
    }

    void run() {
      for (int i = 0; i < n; i++) {
        int node = i;
        at(rng.nextLong(30 * MS), () -> start(node));
      }
      at(rng.nextLong(5 * MS, 120 * MS), this::chaos);
      at(CHAOS, this::heal);
      while (!events.isEmpty()) {
        Event e = events.poll();
        now = e.at;
        if (healedAt >= 0 && now > healedAt + BOUND) {
          break;
        }
        e.action.run();
        if (healedAt >= 0 && now >= healedAt) {
          if (!converged()) {
            convergedAt = -1;
          } else if (convergedAt < 0) {
            convergedAt = now;
          }
        }
      }
      now = healedAt + BOUND;
      if (convergedAt < 0 || !converged()) {
        throw new Violation("no view with active leaders on every node " + ms(BOUND) + " after the heal ("
            + views() + ")");
      }
    }

    // ---- faults

    void chaos() {
      int kind = rng.nextInt(100);
      if (kind < 30) {
        pickLink(true);
      } else if (kind < 50) {
        pickLink(false);
      } else if (kind < 65 && n > 1) {
        int a = rng.nextInt(n);
        if (tcpLike && rng.nextBoolean()) {
          oneWayFlap(a, other(a));
        } else {
          flap(a, other(a));
        }
      } else if (kind < 73) {
        long side = rng.nextLong(1, 1L << n);
        log("partition " + Long.toBinaryString(side));
        for (int a = 0; a < n; a++) {
          for (int b = a + 1; b < n; b++) {
            setCut(a, b, ((side >> a) & 1) != ((side >> b) & 1), null);
          }
        }
      } else if (kind < 80) {
        log("heal links");
        for (int a = 0; a < n; a++) {
          for (int b = a + 1; b < n; b++) {
            setCut(a, b, false, null);
          }
        }
      } else if (kind < 90) {
        int i = rng.nextInt(n);
        if (cores[i] != null && !lastKnower(i)) {
          crash(i);
        }
      } else {
        int i = rng.nextInt(n);
        for (int k = 0; k < n && cores[i] != null; k++) {
          i = (i + 1) % n; // a crashed node, if there is one
        }
        int crashed = i;
        if (cores[crashed] == null) {
          at(Math.max(now, crashedAt[crashed] + MIN_RESTART), () -> start(crashed));
        }
      }
      long next = now + rng.nextLong(5 * MS, 120 * MS);
      if (next < CHAOS) {
        at(next, this::chaos);
      }
    }

    void heal() {
      log("heal everything");
      long last = now;
      for (int a = 0; a < n; a++) {
        for (int b = a + 1; b < n; b++) {
          setCut(a, b, false, null);
        }
        if (cores[a] == null) {
          int i = a;
          long t = Math.max(now, crashedAt[a] + MIN_RESTART);
          last = Math.max(last, t);
          at(t, () -> start(i));
        }
      }
      healedAt = last;
    }

    void flap(int a, int b) {
      setCut(a, b, true, "flap");
      at(now + rng.nextLong(3 * MS + 1), () -> setCut(a, b, false, "flap end"));
    }

    /** TCP's one-way break: {@code a}'s outbound connection to {@code b} breaks and is replaced. */
    void oneWayFlap(int a, int b) {
      if (!actuallyUp(a, b) || oneWay[a][b] != 0) {
        return;
      }
      long token = ++oneWayTokens;
      log("one-way flap " + ids[a] + "->" + ids[b] + " (only " + ids[a] + " is told)");
      oneWay[a][b] = token;
      epoch[a * n + b]++;
      report(a, b, false);
      at(now + rng.nextLong(3 * MS + 1), () -> {
        if (oneWay[a][b] == token) {
          oneWay[a][b] = 0;
          log("one-way flap end " + ids[a] + "->" + ids[b]);
          report(a, b, true);
        }
      });
    }

    /**
     * Faults aimed at elections, which random timing rarely hits: while the chaos lasts, an election message
     * that was just handled sometimes breaks its link for a moment or crashes its receiver.
     */
    void nemesis(int from, int to, ElectionMessage m) {
      if (now >= CHAOS || m instanceof ElectionMessage.Hello || m instanceof ElectionMessage.Beat
          || m instanceof ElectionMessage.BeatAck) {
        return;
      }
      int kind = rng.nextInt(100);
      if (kind < 10) {
        log("nemesis: flap after " + m.getClass().getSimpleName());
        flap(from, to);
      } else if (kind < 13 && cores[to] != null && !lastKnower(to)) {
        log("nemesis: crash after " + m.getClass().getSimpleName());
        crash(to);
      }
    }

    void pickLink(boolean cutIt) {
      if (n > 1) {
        int a = rng.nextInt(n);
        setCut(a, other(a), cutIt, cutIt ? "cut" : "restore");
      }
    }

    int other(int a) {
      int b = rng.nextInt(n - 1);
      return b >= a ? b + 1 : b;
    }

    /** Whether {@code i} is the last live node that is informed and knows the highest adopted term. */
    boolean lastKnower(int i) {
      int knowers = 0;
      boolean isOne = false;
      for (int k = 0; k < n; k++) {
        if (cores[k] != null && cores[k].informed() && cores[k].highestTerm() >= maxAdopted) {
          knowers++;
          isOne |= k == i;
        }
      }
      return isOne && knowers == 1;
    }

    void crash(int i) {
      log("crash " + ids[i]);
      cores[i] = null;
      life[i]++;
      crashedAt[i] = now;
      lastView[i] = null;
      for (int j = 0; j < n; j++) {
        believesUp[i][j] = false; // its reports die with it, and a new core is told afresh
        reportsQueued[i][j] = 0;
      }
      for (int j = 0; j < n; j++) {
        if (j != i) {
          linkChanged(i, j);
        }
      }
    }

    void start(int i) {
      if (cores[i] != null) {
        return;
      }
      List<String> peers = new ArrayList<>(Arrays.asList(ids));
      peers.remove(ids[i]);
      ElectionSettings s = new ElectionSettings(leaderCount, priority[i], TIMINGS.electionDelayNanos(),
          TIMINGS.leaderLeaseNanos(), TIMINGS.heartbeatNanos(), TIMINGS.leaderTimeoutNanos(), 0);
      ElectionCore c = new ElectionCore(ids[i], peers, s, new SplittableRandom(rng.nextLong()));
      tweak.accept(c);
      cores[i] = c;
      lastTerm[i] = 0;
      log("start " + ids[i] + " as " + c.leader().incarnation());
      step(i, new Input.Start<>()); // the driver starts every node with it
      for (int j = 0; j < n; j++) {
        if (j != i) {
          linkChanged(i, j);
        }
      }
    }

    void setCut(int a, int b, boolean value, String why) {
      if (cut[a * n + b] == value) {
        return;
      }
      if (why != null) {
        log(why + " " + ids[a] + "-" + ids[b]);
      }
      cut[a * n + b] = value;
      cut[b * n + a] = value;
      linkChanged(a, b);
    }

    boolean actuallyUp(int a, int b) {
      return cores[a] != null && cores[b] != null && !cut[a * n + b];
    }

    /** Whether what {@code a} sends to {@code b} gets there: the link is up, and not broken one way. */
    boolean delivers(int a, int b) {
      return actuallyUp(a, b) && oneWay[a][b] == 0;
    }

    /** TCP-like: tells {@code x} of its link to {@code y} on {@code x}'s own schedule, after earlier reports. */
    void report(int x, int y, boolean up) {
      if (cores[x] == null) {
        return;
      }
      int l = life[x];
      long t = Math.max(now + rng.nextLong(MAX_DELAY + 1), reportAt[x][y] + 1);
      reportAt[x][y] = t;
      reportsQueued[x][y]++;
      at(t, () -> {
        if (life[x] != l) {
          return;
        }
        reportsQueued[x][y]--; // stepped now: the send guard lets this step's messages pass
        if (!up && believesUp[x][y]) {
          believesUp[x][y] = false;
          step(x, new Input.PeerDown<>(ids[y]));
        } else if (up) {
          believesUp[x][y] = true;
          helloDue[x][y] = true;
          step(x, new Input.PeerUp<>(ids[y]));
        }
      });
    }

    /**
     * Reports a link's new state to its ends: in line with the data, down to both at once and up to each after
     * its own skew; TCP-like, each end in turn on its own schedule ({@link #report}). Every change starts a new
     * epoch: messages in flight (and, in line with the data, up reports not yet delivered) are stale.
     */
    void linkChanged(int a, int b) {
      boolean upNow = actuallyUp(a, b);
      epoch[a * n + b]++;
      epoch[b * n + a]++;
      if (tcpLike) {
        oneWay[a][b] = 0;
        oneWay[b][a] = 0;
        report(a, b, upNow);
        report(b, a, upNow);
        return;
      }
      for (int[] d : new int[][] {{a, b}, {b, a}}) {
        int x = d[0];
        int y = d[1];
        if (believesUp[x][y]) {
          believesUp[x][y] = false;
          if (cores[x] != null) {
            step(x, new Input.PeerDown<>(ids[y]));
          }
        }
        if (upNow) {
          int e = epoch[x * n + y];
          at(now + rng.nextLong(MAX_UP_SKEW + 1), () -> notifyUp(x, y, e));
        }
      }
    }

    void notifyUp(int x, int y, int e) {
      if (epoch[x * n + y] == e && actuallyUp(x, y) && !believesUp[x][y]) {
        believesUp[x][y] = true;
        helloDue[x][y] = true;
        step(x, new Input.PeerUp<>(ids[y]));
      }
    }

    // ---- stepping a core, and the checks

    void step(int i, Input<ElectionMessage> input) {
      ElectionCore core = cores[i];
      long local = local(i, now);
      for (Output<ElectionMessage> o : core.step(local, input)) {
        switch (o) {
          case Output.Send<ElectionMessage> s -> send(i, index(s.to()), s.message());
          case Output.SetTimer<ElectionMessage> t -> {
            int version = ++timerVersion[i];
            int l = life[i];
            at(Math.max(now, realAt(i, t.at())), () -> {
              if (life[i] == l && timerVersion[i] == version) {
                step(i, new Input.TimerFired<>(t.timerId()));
              }
            });
          }
          case Output.CancelTimer<ElectionMessage> t -> timerVersion[i]++;
          case Output.Fact<ElectionMessage> f -> adopted(i, (Observation.View) f.observation());
          default -> throw new Violation(ids[i] + " output " + o);
        }
      }
    }

    void send(int i, int j, ElectionMessage m) {
      if (!believesUp[i][j]) {
        throw new Violation(ids[i] + " sent " + m + " to " + ids[j] + " over a link it was not told is up");
      }
      if (helloDue[i][j]) {
        helloDue[i][j] = false;
        if (!(m instanceof ElectionMessage.Hello)) {
          throw new Violation(ids[i] + " sent " + m + " to " + ids[j] + " before its Hello");
        }
      }
      ElectionMessage back = codec.decode(codec.encode(m));
      if (!back.equals(m)) {
        throw new Violation("codec round trip of " + m + " gave " + back);
      }
      messages++;
      if (tcpLike && reportsQueued[i][j] > 0) {
        return; // the node runtime's send guard: a report about j is queued for i's core
      }
      if (!delivers(i, j)) {
        return; // into a link that broke: lost
      }
      long t = Math.max(now + rng.nextLong(MAX_DELAY + 1), lastDelivery[i][j]);
      lastDelivery[i][j] = t;
      int e = epoch[i * n + j];
      at(t, () -> {
        if (epoch[i * n + j] == e && cores[j] != null) {
          if (traced && !(m instanceof ElectionMessage.Beat) && !(m instanceof ElectionMessage.BeatAck)) {
            log(ids[j] + " <- " + ids[i] + " " + m);
          }
          if (m instanceof ElectionMessage.Vote v && v.granted()) {
            grantsDelivered.computeIfAbsent(List.of((long) j, (long) life[j], v.term()), k -> new HashSet<>()).add(i);
          }
          step(j, new Input.Message<>(ids[i], m));
          nemesis(i, j, m);
        }
      });
    }

    void adopted(int i, Observation.View v) {
      Leader me = cores[i].leader();
      log(ids[i] + " view " + v.term() + " " + v.leaders() + (v.activeUntil() == Long.MIN_VALUE ? ""
          : " active until " + ms(v.activeUntil() - local(i, now)) + " from now"));
      if (v.term() < lastTerm[i]) {
        throw new Violation(ids[i] + " went back from term " + lastTerm[i] + " to " + v.term());
      }
      lastTerm[i] = v.term();
      if (v.activeUntil() != Long.MIN_VALUE && !v.leaders().contains(me)) {
        throw new Violation(ids[i] + " is active but not a leader of " + v);
      }
      List<Leader> known = termLeaders.putIfAbsent(v.term(), v.leaders());
      if (known != null && !known.equals(v.leaders())) {
        throw new Violation("V-1: term " + v.term() + " has leaders " + known + " and " + v.leaders() + " (at "
            + ids[i] + ")");
      }
      lastView[i] = v;
      maxAdopted = Math.max(maxAdopted, v.term());
      if (known == null) { // first adopted now, by its conductor: it had a majority of distinct votes
        int voters = 1 + grantsDelivered.getOrDefault(List.of((long) i, (long) life[i], v.term()), Set.of()).size();
        if (voters < n / 2 + 1) {
          throw new Violation("E6: " + ids[i] + " established term " + v.term() + " with granted votes from " + voters
              + " distinct members of " + n);
        }
      }
      if (known == null) { // and every leader it drops must be inactive already
        for (int y = 0; y < n; y++) {
          if (active(y) && lastView[y].term() < v.term() && !v.leaders().contains(cores[y].leader())) {
            throw new Violation("V-2: " + ids[y] + " leads term " + lastView[y].term() + " until "
                + ms(lastView[y].activeUntil() - local(y, now)) + " from now, but term " + v.term() + " "
                + v.leaders() + " was just adopted by " + ids[i]);
          }
        }
      }
      if (active(i)) { // and this node may not be active after a later term that drops it was adopted
        for (Map.Entry<Long, List<Leader>> later : termLeaders.tailMap(v.term(), false).entrySet()) {
          if (!later.getValue().contains(me)) {
            throw new Violation("V-2: " + ids[i] + " is active in term " + v.term() + " after term "
                + later.getKey() + " " + later.getValue() + " was adopted");
          }
        }
      }
    }

    boolean active(int y) {
      return cores[y] != null && lastView[y] != null && lastView[y].activeUntil() > local(y, now);
    }

    boolean converged() {
      Observation.View first = null;
      for (ElectionCore c : cores) {
        if (c == null) {
          return false;
        }
        Observation.View v = c.view();
        if (v.term() == 0 || first != null && (v.term() != first.term() || !v.leaders().equals(first.leaders()))) {
          return false;
        }
        first = v;
      }
      if (first.leaders().size() != Math.min(leaderCount, n)) {
        return false;
      }
      for (Leader l : first.leaders()) {
        int j = index(l.nodeId());
        if (!cores[j].leader().equals(l) || !cores[j].isActiveLeader(local(j, now))) {
          return false;
        }
      }
      return true;
    }

    String views() {
      StringBuilder b = new StringBuilder();
      for (int i = 0; i < n; i++) {
        b.append(ids[i]).append('=').append(cores[i] == null ? "down" : cores[i].view().term() + " "
            + cores[i].view().leaders() + (cores[i].isActiveLeader(local(i, now)) ? " active" : "")
            + (cores[i].informed() ? "" : " uninformed")).append("; ");
      }
      return b.toString();
    }

    // ---- time

    long local(int i, long real) {
      return offset[i] + real + real * ppm[i] / 1_000_000;
    }

    /** The first real time at which node {@code i}'s clock reads {@code localTime} or later. */
    long realAt(int i, long localTime) {
      long t = Math.max(0, Math.floorDiv((localTime - offset[i]) * 1_000_000, 1_000_000 + ppm[i]));
      while (local(i, t) < localTime) {
        t++;
      }
      while (t > 0 && local(i, t - 1) >= localTime) {
        t--;
      }
      return t;
    }

    void at(long t, Runnable action) {
      events.add(new Event(t, order++, action));
    }

    int index(String id) {
      return Integer.parseInt(id.substring(1)) - 1;
    }

    void log(String line) {
      if (traced) {
        trace.add(ms(now) + " " + line);
      }
    }
  }

  private record Event(long at, long order, Runnable action) {}
}
