package dev.tumbler.peer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.tumbler.peer.algorithm.Algorithm;
import dev.tumbler.peer.algorithm.AlgorithmSettings;
import dev.tumbler.peer.algorithm.CoreContext;
import dev.tumbler.peer.composite.Channel;
import dev.tumbler.peer.composite.CompositeCore;
import dev.tumbler.peer.composite.Envelope;
import dev.tumbler.peer.composite.EnvelopeCodec;
import dev.tumbler.peer.composite.Hosting;
import dev.tumbler.peer.composite.Semaphores;
import dev.tumbler.peer.core.Claim;
import dev.tumbler.peer.core.Input;
import dev.tumbler.peer.core.Observation;
import dev.tumbler.peer.core.Output;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.function.BooleanSupplier;

/**
 * A small deterministic cluster for scripted tests of a native algorithm: each node is the composite a real node
 * runs ({@link Hosting#core}), one clock for all, messages delivered in the order they were sent (through the wire
 * codec) unless their link is cut, timers fired in time order.
 *
 * <p>It checks as it goes: a core sends only over links it was told are up; every message survives the codec;
 * at every grant of a lock, no other valid grant of the name conflicts with it (validity windows, READ/WRITE
 * semantics), and an exclusive or write grant's token is above every earlier token of the name (F3), a shared one
 * above every grant that ended before it (F2), and no token repeats (F1); at every grant of permits, the permits of
 * the valid grants of the name, this one included, fit in the limit of its handle.
 */
public class ScriptedCluster {

  public static final long MS = 1_000_000;
  /** The simulator's lease term (Appendix A). */
  public static final long T = 120 * MS;
  public static final long PEER_TIMEOUT = 500 * MS;

  /** Types that are not per entry (§2.10): elections, restatements, keep-alives, renewals, hand-overs. */
  public static final Set<String> BACKGROUND = Set.of("election/Hello", "election/Propose", "election/Vote",
      "election/Leaders", "election/Beat", "election/BeatAck", "lock/Restate", "lock/Waiting", "lock/Renew",
      "lock/Renewed", "lock/RenewTicket", "lock/TicketRenewed", "lock/TablesRequest", "lock/Tables",
      "lock/Restated", "lock/SessionRenew", "lock/SessionRenewed", "buckets/Restate", "buckets/Restated",
      "buckets/SessionRenew", "buckets/SessionRenewed");

  public final List<String> ids = new ArrayList<>();
  public final Map<String, AlgorithmSettings> settings = new TreeMap<>();
  public final Map<String, CompositeCore> cores = new TreeMap<>();
  final Map<String, Map<Long, Long>> timers = new TreeMap<>();
  final Set<String> cut = new HashSet<>();
  final Set<String> believedUp = new HashSet<>();
  final Map<String, Integer> epochs = new HashMap<>();
  final Deque<Msg> inFlight = new ArrayDeque<>();
  /** Directed links ({@code a>b}) whose messages are held back, in order, until {@link #fast}. */
  final Set<String> slow = new HashSet<>();
  final Deque<Msg> parked = new ArrayDeque<>();
  public final Map<String, Long> sentByType = new TreeMap<>();
  public final List<String> trace = new ArrayList<>();
  final SplittableRandom random;
  public final Algorithm<?> algorithm;
  /** How the nodes serve semaphores, or null for none beyond what the lock algorithm serves. */
  public final Semaphores semaphores;
  public final EnvelopeCodec codec;
  public long now = 1_000 * MS;
  long nextRequestId = 1;
  public long nextQueryId = 1;
  /** The answers to holder queries, by query id. */
  public final Map<Long, Output.Holder<Envelope>> holders = new HashMap<>();
  /** The answers to permit queries, by query id. */
  final Map<Long, Output.Permits<Envelope>> permitAnswers = new HashMap<>();

  /** The answers to listings, by query id. */
  final Map<Long, Output.Listing<Envelope>> listings = new HashMap<>();

  /** What happened to each request, by id. */
  final Map<Long, Req> requests = new LinkedHashMap<>();
  /** Tokens of every grant of each name, in grant order. */
  final Map<String, List<Long>> tokens = new HashMap<>();
  /** The largest token of a grant of each name that has ended. */
  final Map<String, Long> endedMax = new HashMap<>();

  record Msg(String from, String to, Envelope message, int epoch) {}

  public static final class Req {
    public final long id;
    public final String node;
    public final Claim claim;
    public Output.Granted<Envelope> granted;
    public long grantedAt = -1;
    public Output.Failed<Envelope> failed;
    public Output.Lost<Envelope> lost;
    public long lostAt = -1;
    public final List<Output.Renewed<Envelope>> renewed = new ArrayList<>();
    public long validUntil;
    public boolean released;

    Req(long id, String node, Claim claim) {
      this.id = id;
      this.node = node;
      this.claim = claim;
    }

    public boolean held(long now) {
      return granted != null && lost == null && !released && now < validUntil;
    }
  }

  /**
   * @param n the members, {@code n1} to {@code nN}
   * @param algorithm their lock algorithm, each node with {@code settings} until a test changes them
   * @param semaphores how they serve semaphores beside it, or null
   */
  public ScriptedCluster(int n, long seed, Algorithm<?> algorithm, AlgorithmSettings settings, Semaphores semaphores) {
    random = new SplittableRandom(seed);
    this.algorithm = algorithm;
    this.semaphores = semaphores;
    this.codec = Hosting.codec(algorithm, semaphores);
    for (int i = 1; i <= n; i++) {
      ids.add("n" + i);
      this.settings.put("n" + i, settings);
    }
  }

  public void startAll() {
    for (String id : ids) {
      start(id);
    }
  }

  public void start(String id) {
    List<String> others = new ArrayList<>(ids);
    others.remove(id);
    CoreContext ctx = new CoreContext(id, others, PEER_TIMEOUT, T, 0, new SplittableRandom(random.nextLong()),
        settings.get(id));
    cores.put(id, Hosting.core(algorithm, ctx, semaphores));
    timers.put(id, new TreeMap<>());
    step(id, new Input.Start<>());
    for (String o : others) {
      if (cores.containsKey(o) && !cut.contains(pair(id, o))) {
        connect(id, o);
      }
    }
    drain();
  }

  public void crash(String id) {
    for (String o : ids) {
      if (!o.equals(id)) {
        disconnect(id, o);
      }
    }
    cores.remove(id);
    timers.remove(id);
    for (Req r : requests.values()) {
      if (r.node.equals(id) && r.granted != null && r.lost == null && !r.released) {
        r.released = true; // its holder died with it
        endedMax.merge(key(r.claim), r.granted.fencingToken(), Math::max);
      }
    }
    drain();
  }

  public void cut(String a, String b) {
    cut.add(pair(a, b));
    disconnect(a, b);
    drain();
  }

  public void heal(String a, String b) {
    cut.remove(pair(a, b));
    if (cores.containsKey(a) && cores.containsKey(b)) {
      connect(a, b);
    }
    drain();
  }

  // ---- clients

  public long acquire(String node, Claim claim) {
    return acquire(node, claim, false);
  }

  public long acquire(String node, Claim claim, boolean attempt) {
    long id = nextRequestId++;
    requests.put(id, new Req(id, node, claim));
    step(node, new Input.Acquire<>(id, "s-" + node, claim, attempt));
    drain();
    return id;
  }

  /**
   * Asks {@code node} who holds {@code name} and delivers everything: the answer's tag, empty for none; null when
   * no answer came (its message lost).
   */
  public String holder(String node, String name) {
    long id = nextQueryId++;
    step(node, new Input.HolderQuery<>(id, name));
    drain();
    Output.Holder<Envelope> h = holders.get(id);
    if (h != null) {
      assertEquals(name, h.name(), "the answer names another lock");
    }
    return h == null ? null : h.tag();
  }

  /**
   * Asks {@code node} how many permits of {@code name} are free for a handle of {@code limit} and delivers
   * everything: the answer, or null when none came.
   */
  public Integer permits(String node, String name, int limit) {
    long id = askPermits(node, name, limit);
    drain();
    return permitsAnswer(id);
  }

  /** Asks {@code node} how many permits of {@code name} are free for a handle of {@code limit}; returns the query id. */
  public long askPermits(String node, String name, int limit) {
    long id = nextQueryId++;
    step(node, new Input.PermitsQuery<>(id, name, limit));
    return id;
  }

  /** The answer to permits query {@code id}, or null while none came. */
  public Integer permitsAnswer(long id) {
    Output.Permits<Envelope> p = permitAnswers.get(id);
    return p == null ? null : p.available();
  }

  /**
   * Asks {@code node} what is held under {@code prefixes} and delivers everything: the answer (null when the node cannot
   * say), or an {@link AssertionError} when none came.
   */
  public List<Output.Listed> listing(String node, String... prefixes) {
    long id = nextQueryId++;
    step(node, new Input.ListQuery<>(id, List.of(prefixes)));
    drain();
    Output.Listing<Envelope> l = listings.get(id);
    assertTrue(l != null, "no answer to the listing " + id + " of " + node);
    return l.known() ? l.held() : null;
  }

  /** Asks {@code node} what is held under {@code prefixes} without delivering anything; returns the query id. */
  public long askListing(String node, String... prefixes) {
    long id = nextQueryId++;
    step(node, new Input.ListQuery<>(id, List.of(prefixes)));
    return id;
  }

  /** The answer to listing {@code id}, or null while none came. */
  public Output.Listing<Envelope> listingAnswer(long id) {
    return listings.get(id);
  }

  /** The claims of {@code all} listed under {@code name}. */
  public static List<Output.Listed> named(List<Output.Listed> all, String name) {
    return all.stream().filter(l -> l.name().equals(name)).toList();
  }

  /** Starts a request without delivering anything yet, so that several requests can race. */
  public long acquireNoDrain(String node, Claim claim) {
    long id = nextRequestId++;
    requests.put(id, new Req(id, node, claim));
    step(node, new Input.Acquire<>(id, "s-" + node, claim, false));
    return id;
  }

  public void release(long id) {
    Req r = requests.get(id);
    if (r.granted != null && r.lost == null && !r.released) {
      endedMax.merge(key(r.claim), r.granted.fencingToken(), Math::max);
    }
    r.released = true;
    step(r.node, new Input.Release<>(id));
    drain();
  }

  public void cancel(long id) {
    Req r = requests.get(id);
    r.released = true;
    step(r.node, new Input.Cancel<>(id));
    drain();
  }

  public void renew(long id) {
    step(requests.get(id).node, new Input.Renew<>(id));
    drain();
  }

  /**
   * The gap from a holder's loss to a waiter's grant: {@code holder} takes {@code held} on its node, {@code waiter} asks
   * for {@code wanted} on its own, the holder never renews (nor is cut off), and its window closes with {@code EXPIRED}.
   * DESIGN's lease rule wants at least the margin the server's term leaves after the holder's window.
   */
  public long lossToNextGrant(String holder, Claim held, String waiter, Claim wanted, long maxNanos) {
    long first = acquire(holder, held);
    long second = acquire(waiter, wanted);
    assertTrue(!req(second).held(now), "the waiter was granted while the holder held it");
    until(() -> req(first).lost != null, maxNanos, "the holder's window closes");
    assertEquals(Output.LostReason.EXPIRED, req(first).lost.reason(), "how the holder lost it");
    until(() -> req(second).held(now), maxNanos, "the waiter is granted");
    return req(second).grantedAt - req(first).lostAt;
  }

  public Req req(long id) {
    return requests.get(id);
  }

  // ---- the network

  private void connect(String a, String b) {
    epochs.merge(pair(a, b), 1, Integer::sum);
    for (String[] d : new String[][] {{a, b}, {b, a}}) {
      believedUp.add(d[0] + ">" + d[1]);
      step(d[0], new Input.PeerUp<>(d[1]));
    }
  }

  private void disconnect(String a, String b) {
    epochs.merge(pair(a, b), 1, Integer::sum);
    for (String[] d : new String[][] {{a, b}, {b, a}}) {
      if (believedUp.remove(d[0] + ">" + d[1]) && cores.containsKey(d[0])) {
        step(d[0], new Input.PeerDown<>(d[1]));
      }
    }
  }

  public void step(String node, Input<Envelope> in) {
    CompositeCore core = cores.get(node);
    for (Output<Envelope> o : core.step(now, in)) {
      switch (o) {
        case Output.Send<Envelope> s -> {
          String link = node + ">" + s.to();
          assertTrue(believedUp.contains(link), () -> "sent on a link that is down: " + link + " " + s.message());
          Envelope decoded = codec.decode(codec.encode(s.message()));
          assertEquals(s.message(), decoded, "the codec changed a message");
          sentByType.merge(s.message().typeName(), 1L, Long::sum);
          inFlight.add(new Msg(node, s.to(), decoded, epochs.get(pair(node, s.to()))));
        }
        case Output.SetTimer<Envelope> t -> {
          assertTrue(t.at() > now, "a timer in the past");
          timers.get(node).put(t.timerId(), t.at());
        }
        case Output.CancelTimer<Envelope> t -> timers.get(node).remove(t.timerId());
        case Output.Granted<Envelope> g -> granted(node, g);
        case Output.Failed<Envelope> f -> {
          Req r = requests.get(f.requestId());
          assertTrue(r != null && r.node.equals(node), "a failure of another node's request " + f);
          assertTrue(r.failed == null && r.granted == null, "a second outcome for " + f);
          r.failed = f;
          trace.add(now / MS + " " + node + " failed " + f.requestId() + " " + f.failure());
        }
        case Output.Lost<Envelope> l -> {
          Req r = requests.get(l.requestId());
          if (r != null && r.granted != null && r.lost == null && !r.released) {
            assertTrue(now <= r.validUntil, "lost later than the window: " + l);
            r.lost = l;
            r.lostAt = now;
            endedMax.merge(key(r.claim), r.granted.fencingToken(), Math::max);
          }
          trace.add(now / MS + " " + node + " lost " + l.requestId() + " " + l.reason());
        }
        case Output.Renewed<Envelope> rn -> {
          Req r = requests.get(rn.requestId());
          assertTrue(r != null && r.granted != null && r.lost == null, "a renewal of a request not held " + rn);
          assertTrue(now < r.validUntil, "renewed after the window closed");
          long lastSentAt = r.renewed.isEmpty() ? r.granted.sentAt() : r.renewed.getLast().sentAt();
          assertTrue(rn.sentAt() >= lastSentAt, "a renewal's sentAt went back");
          assertEquals(rn.sentAt() + T / 4 * 3, rn.validUntil(), "validUntil = sentAt + T·3/4");
          r.renewed.add(rn);
          r.validUntil = rn.validUntil();
        }
        case Output.Holder<Envelope> h -> assertTrue(holders.put(h.queryId(), h) == null, "a second answer " + h);
        case Output.TxAborted<Envelope> a -> fail("the scripted cluster begins no transaction: " + a);
        case Output.Permits<Envelope> p -> assertTrue(permitAnswers.put(p.queryId(), p) == null, "a second answer " + p);
        case Output.Listing<Envelope> l -> assertTrue(listings.put(l.queryId(), l) == null, "a second answer " + l);
        case Output.Fact<Envelope> f -> {
          if (f.observation() instanceof Observation.Ticket t) {
            trace.add(now / MS + " " + node + " " + t.name() + " " + t.key() + " " + t.state());
          }
        }
      }
    }
  }

  private void granted(String node, Output.Granted<Envelope> g) {
    Req r = requests.get(g.requestId());
    assertTrue(r != null && r.node.equals(node), "a grant of another node's request " + g);
    assertTrue(r.granted == null && r.failed == null, "a second outcome for " + g);
    assertEquals(g.sentAt() + T / 4 * 3, g.validUntil(), "validUntil = sentAt + T·3/4");
    assertTrue(g.sentAt() <= now, "a grant trusted from the future");
    String name = r.claim.name();
    boolean permits = r.claim.mode() == Claim.Mode.PERMITS;
    int out = g.permits();
    for (Req o : requests.values()) {
      if (o == r || !o.claim.name().equals(name) || !o.held(now) || !cores.containsKey(o.node)
          || (o.claim.mode() == Claim.Mode.PERMITS) != permits) {
        continue;
      }
      if (permits) {
        out += o.granted.permits();
      } else if (o.claim.mode() != Claim.Mode.READ || r.claim.mode() != Claim.Mode.READ) {
        fail("exclusion: " + r.claim + " granted to " + g.requestId() + " on " + node + " while " + o.id + " on "
            + o.node + " holds " + o.claim + " until " + o.validUntil / MS + " (now " + now / MS + ")");
      }
    }
    if (permits && out > r.claim.limit()) {
      fail("permits: " + g.permits() + " of " + name + " granted to " + g.requestId() + " on " + node + " make " + out
          + " out, above its handle's limit " + r.claim.limit());
    }
    assertEquals(permits ? r.claim.permits() : 1, g.permits(), "the permits granted");
    name = (permits ? "permits:" : "lock:") + name;
    List<Long> seen = tokens.computeIfAbsent(name, k -> new ArrayList<>());
    assertTrue(!seen.contains(g.fencingToken()), "F1: token " + g.fencingToken() + " repeats");
    assertTrue(g.fencingToken() > endedMax.getOrDefault(name, Long.MIN_VALUE), "F2: token " + g.fencingToken()
        + " below a grant that ended: " + endedMax.get(name));
    if (r.claim.mode() != Claim.Mode.READ && !permits) {
      for (long t : seen) {
        assertTrue(g.fencingToken() > t, "F3: write token " + g.fencingToken() + " below earlier " + t);
      }
    }
    seen.add(g.fencingToken());
    r.granted = g;
    r.grantedAt = now;
    r.validUntil = g.validUntil();
    trace.add(now / MS + " " + node + " granted " + g.requestId() + " token " + Long.toHexString(g.fencingToken()));
  }

  /** Holds back every message from {@code a} to {@code b}, keeping their order (a slow link, nothing lost). */
  public void slow(String a, String b) {
    slow.add(a + ">" + b);
  }

  /** Delivers what {@link #slow} held back, then lets the link run normally. */
  public void fast(String a, String b) {
    slow.remove(a + ">" + b);
    List<Msg> held = new ArrayList<>();
    parked.removeIf(m -> m.from.equals(a) && m.to.equals(b) && held.add(m));
    for (int i = held.size() - 1; i >= 0; i--) {
      inFlight.addFirst(held.get(i));
    }
    drain();
  }

  public void drain() {
    while (!inFlight.isEmpty()) {
      Msg m = inFlight.poll();
      if (slow.contains(m.from + ">" + m.to)) {
        parked.add(m);
        continue;
      }
      if (cores.containsKey(m.to) && epochs.get(pair(m.from, m.to)) == m.epoch
          && believedUp.contains(m.to + ">" + m.from)) {
        step(m.to, new Input.Message<>(m.from, m.message));
      }
    }
  }

  /** Lets {@code nanos} pass, firing every timer due meanwhile in time order. */
  public void advance(long nanos) {
    advanceTo(now + nanos);
  }

  public void advanceTo(long until) {
    while (true) {
      String node = null;
      long timer = 0;
      long at = Long.MAX_VALUE;
      for (Map.Entry<String, Map<Long, Long>> n : timers.entrySet()) {
        for (Map.Entry<Long, Long> t : n.getValue().entrySet()) {
          if (t.getValue() <= until && t.getValue() < at) {
            node = n.getKey();
            timer = t.getKey();
            at = t.getValue();
          }
        }
      }
      if (node == null) {
        now = Math.max(now, until);
        return;
      }
      now = Math.max(now, at);
      timers.get(node).remove(timer);
      step(node, new Input.TimerFired<>(timer));
      drain();
    }
  }

  /** Advances in steps of 1 ms until {@code done} holds; fails after {@code maxNanos}. */
  public void until(BooleanSupplier done, long maxNanos, String what) {
    long end = now + maxNanos;
    while (!done.getAsBoolean()) {
      if (now >= end) {
        fail("not within " + maxNanos / MS + " ms: " + what + "\n" + String.join("\n", tail(trace, 40)));
      }
      advance(MS);
    }
  }

  public boolean isLeader(String id) {
    return cores.get(id).core(Channel.ELECTION) instanceof dev.tumbler.peer.election.ElectionCore e
        && e.view().leaders().stream().anyMatch(l -> l.nodeId().equals(id));
  }

  public List<String> leaders() {
    var e = (dev.tumbler.peer.election.ElectionCore) cores.get(cores.keySet().iterator().next())
        .core(Channel.ELECTION);
    return e.view().leaders().stream().map(dev.tumbler.peer.core.Leader::nodeId).toList();
  }

  public long perEntryMessages(Map<String, Long> before) {
    long n = 0;
    for (Map.Entry<String, Long> e : sentByType.entrySet()) {
      if (!BACKGROUND.contains(e.getKey())) {
        n += e.getValue() - before.getOrDefault(e.getKey(), 0L);
      }
    }
    return n;
  }

  /** The fencing history a claim's grants share: locks and semaphores of one name keep apart. */
  static String key(Claim c) {
    return (c.mode() == Claim.Mode.PERMITS ? "permits:" : "lock:") + c.name();
  }

  private static List<String> tail(List<String> l, int n) {
    return l.subList(Math.max(0, l.size() - n), l.size());
  }

  public static String pair(String a, String b) {
    return a.compareTo(b) < 0 ? a + "|" + b : b + "|" + a;
  }
}
