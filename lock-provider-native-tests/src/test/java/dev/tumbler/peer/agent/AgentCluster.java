package dev.tumbler.peer.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.tumbler.lock.TransactionOptions.Quorum;
import dev.tumbler.peer.algorithm.AlgorithmSettings;
import dev.tumbler.peer.algorithm.CoreContext;
import dev.tumbler.peer.composite.Channel;
import dev.tumbler.peer.composite.CompositeCore;
import dev.tumbler.peer.composite.Envelope;
import dev.tumbler.peer.composite.EnvelopeCodec;
import dev.tumbler.peer.composite.Hosting;
import dev.tumbler.peer.core.Claim;
import dev.tumbler.peer.core.Input;
import dev.tumbler.peer.core.Observation;
import dev.tumbler.peer.core.Output;
import dev.tumbler.peer.core.TxOptions;
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

/**
 * A small deterministic cluster of {@code agent} nodes for scripted tests: each node is the composite a real node
 * runs ({@link Hosting#core}), one clock for all, messages delivered in the order they were sent (through the wire
 * codec) unless their link is cut, timers fired in time order.
 *
 * <p>It checks as it goes: a core sends only over links it was told are up; every message survives the codec; no
 * lock table ever has two conflicting holders (AG-1); at every grant, no other valid claim of another transaction
 * with the same quorum and nodes conflicts with it (AG-3, paths related, a write among the modes), and its token is
 * above the token of every conflicting claim of the same path that ended before it.
 */
final class AgentCluster {

  static final long MS = 1_000_000;
  static final long T = 120 * MS;
  static final long PEER_TIMEOUT = 500 * MS;

  final List<String> ids = new ArrayList<>();
  final Map<String, CompositeCore> cores = new TreeMap<>();
  final Map<String, Map<Long, Long>> timers = new TreeMap<>();
  final Set<String> cut = new HashSet<>();
  final Set<String> believedUp = new HashSet<>();
  final Map<String, Integer> epochs = new HashMap<>();
  final Deque<Msg> inFlight = new ArrayDeque<>();
  final Map<String, Long> sentByType = new TreeMap<>();
  final List<String> trace = new ArrayList<>();
  final EnvelopeCodec codec = Hosting.codec(AgentAlgorithm.AGENT);
  final SplittableRandom random;
  long now = 1_000 * MS;
  long nextId = 1;

  final Map<Long, Req> requests = new LinkedHashMap<>();
  final Map<Long, Tx> txs = new LinkedHashMap<>();
  final List<Observation.Surrender> surrenders = new ArrayList<>();
  /** The largest token of an ended (released, lost, aborted) grant of each path. */
  final Map<List<String>, Long> endedMax = new HashMap<>();
  /** The answers to listings, by query id. */
  final Map<Long, Output.Listing<Envelope>> listings = new HashMap<>();

  record Msg(String from, String to, Envelope message, int epoch) {}

  static final class Tx {
    final long id;
    final String node;
    final TxOptions options;
    Output.TxAborted<Envelope> aborted;
    boolean ended;

    Tx(long id, String node, TxOptions options) {
      this.id = id;
      this.node = node;
      this.options = options;
    }
  }

  static final class Req {
    final long id;
    final String node;
    final Claim claim;
    final Tx tx;
    final List<Output.Granted<Envelope>> grants = new ArrayList<>();
    final List<Output.Lost<Envelope>> losses = new ArrayList<>();
    Output.Failed<Envelope> failed;
    boolean held;
    long validUntil;
    boolean released;

    Req(long id, String node, Claim claim, Tx tx) {
      this.id = id;
      this.node = node;
      this.claim = claim;
      this.tx = tx;
    }

    long token() {
      return grants.get(grants.size() - 1).fencingToken();
    }
  }

  AgentCluster(int n, long seed) {
    random = new SplittableRandom(seed);
    for (int i = 1; i <= n; i++) {
      ids.add("n" + i);
    }
  }

  void startAll() {
    for (String id : ids) {
      start(id);
    }
  }

  void start(String id) {
    List<String> others = new ArrayList<>(ids);
    others.remove(id);
    CoreContext ctx = new CoreContext(id, others, PEER_TIMEOUT, T, 0, new SplittableRandom(random.nextLong()),
        AlgorithmSettings.NONE);
    cores.put(id, Hosting.core(AgentAlgorithm.AGENT, ctx));
    timers.put(id, new TreeMap<>());
    step(id, new Input.Start<>());
    for (String o : others) {
      if (cores.containsKey(o) && !cut.contains(pair(id, o))) {
        connect(id, o);
      }
    }
    drain();
  }

  AgentCore agent(String id) {
    return (AgentCore) cores.get(id).core(Channel.LOCK);
  }

  void crash(String id) {
    for (String o : ids) {
      if (!o.equals(id)) {
        disconnect(id, o);
      }
    }
    cores.remove(id);
    timers.remove(id);
    for (Req r : requests.values()) {
      if (r.node.equals(id) && r.held) {
        ended(r); // its holder died with it
      }
    }
    drain();
  }

  void cut(String a, String b) {
    cut.add(pair(a, b));
    disconnect(a, b);
    drain();
  }

  void heal(String a, String b) {
    cut.remove(pair(a, b));
    if (cores.containsKey(a) && cores.containsKey(b)) {
      connect(a, b);
    }
    drain();
  }

  // ---- clients

  long begin(String node, TxOptions options) {
    long id = nextId++;
    txs.put(id, new Tx(id, node, options));
    step(node, new Input.Begin<>(id, "s-" + node, options));
    drain();
    return id;
  }

  long begin(String node) {
    return begin(node, new TxOptions(false, Quorum.ALL, List.of(), 0));
  }

  /** A claim of transaction {@code tx}; nothing is delivered yet, so that several claims can race. */
  long lockNoDrain(long tx, Claim.Mode mode, String... path) {
    Tx t = txs.get(tx);
    long id = nextId++;
    Claim claim = Claim.tx(List.of(path), mode);
    requests.put(id, new Req(id, t.node, claim, t));
    step(t.node, new Input.Acquire<>(id, "s-" + t.node, claim, false, tx));
    return id;
  }

  long lock(long tx, Claim.Mode mode, String... path) {
    long id = lockNoDrain(tx, mode, path);
    drain();
    return id;
  }

  /** A plain lock's request on {@code node}. */
  long plain(String node, Claim claim, boolean attempt) {
    long id = plainNoDrain(node, claim, attempt);
    drain();
    return id;
  }

  /** A plain lock's request on {@code node}; nothing is delivered yet. */
  long plainNoDrain(String node, Claim claim, boolean attempt) {
    long id = nextId++;
    requests.put(id, new Req(id, node, claim, null));
    step(node, new Input.Acquire<>(id, "s-" + node, claim, attempt));
    return id;
  }

  /**
   * Asks {@code node} what is held under {@code prefixes} and delivers everything: the answer, or null while none
   * came.
   */
  Output.Listing<Envelope> listing(String node, String... prefixes) {
    long id = nextId++;
    step(node, new Input.ListQuery<>(id, List.of(prefixes)));
    drain();
    return listings.get(id);
  }

  void end(long tx) {
    Tx t = txs.get(tx);
    t.ended = true;
    for (Req r : requests.values()) {
      if (r.tx == t && r.held) {
        ended(r);
      }
    }
    if (cores.containsKey(t.node)) {
      step(t.node, new Input.End<>(tx));
    }
    drain();
  }

  void release(long id) {
    Req r = requests.get(id);
    if (r.held) {
      ended(r);
    }
    r.released = true;
    step(r.node, new Input.Release<>(id));
    drain();
  }

  void renew(long id) {
    step(requests.get(id).node, new Input.Renew<>(id));
    drain();
  }

  Req req(long id) {
    return requests.get(id);
  }

  Tx tx(long id) {
    return txs.get(id);
  }

  private void ended(Req r) {
    r.held = false;
    endedMax.merge(r.claim.path(), r.token(), Math::max);
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

  private static String pair(String a, String b) {
    return a.compareTo(b) < 0 ? a + "|" + b : b + "|" + a;
  }

  /** Delivers every message in flight, in order, and what they cause, without moving the clock. */
  void drain() {
    int guard = 0;
    while (!inFlight.isEmpty()) {
      if (++guard > 1_000_000) {
        fail("messages never stop: " + sentByType);
      }
      Msg m = inFlight.poll();
      if (cores.containsKey(m.to) && epochs.get(pair(m.from, m.to)) == m.epoch) {
        step(m.to, new Input.Message<>(m.from, m.message));
      }
    }
  }

  /** Delivers one message in flight (the first), for tests that interleave by hand. */
  boolean deliverOne() {
    Msg m = inFlight.poll();
    if (m == null) {
      return false;
    }
    if (cores.containsKey(m.to) && epochs.get(pair(m.from, m.to)) == m.epoch) {
      step(m.to, new Input.Message<>(m.from, m.message));
    }
    return true;
  }

  /**
   * Moves the clock by {@code nanos}, firing timers in time order and delivering what they cause; every third of
   * the term, the holders renew, as the node's renewer does for them.
   */
  void advance(long nanos) {
    long end = now + nanos;
    while (now < end) {
      advanceNoRenewal(Math.min(T / 3, end - now));
      for (Req r : List.copyOf(requests.values())) {
        if (r.held && cores.containsKey(r.node)) {
          renew(r.id);
        }
      }
    }
  }

  /** Moves the clock by {@code nanos} as {@link #advance} does, with no holder renewing. */
  void advanceNoRenewal(long nanos) {
    long until = now + nanos;
    while (true) {
      drain();
      String node = null;
      long at = Long.MAX_VALUE;
      long id = 0;
      for (Map.Entry<String, Map<Long, Long>> e : timers.entrySet()) {
        for (Map.Entry<Long, Long> t : e.getValue().entrySet()) {
          if (t.getValue() < at) {
            at = t.getValue();
            node = e.getKey();
            id = t.getKey();
          }
        }
      }
      if (node == null || at > until) {
        break;
      }
      now = Math.max(now, at);
      timers.get(node).remove(id);
      step(node, new Input.TimerFired<>(id));
    }
    now = until;
    drain();
  }

  void step(String node, Input<Envelope> in) {
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
          assertNull(r.failed, "a second failure for " + f);
          assertTrue(!r.held, "a failure of a held request " + f);
          r.failed = f;
          trace.add(now / MS + " " + node + " failed " + f.requestId() + " " + f.failure());
        }
        case Output.Lost<Envelope> l -> {
          Req r = requests.get(l.requestId());
          if (r != null && r.held) {
            assertTrue(now <= r.validUntil, "lost later than the window: " + l);
            r.losses.add(l);
            ended(r);
          }
          trace.add(now / MS + " " + node + " lost " + l.requestId() + " " + l.reason());
        }
        case Output.Renewed<Envelope> rn -> {
          Req r = requests.get(rn.requestId());
          assertTrue(r != null && r.held, "a renewal of a request not held: " + rn);
          assertTrue(rn.validUntil() > now, "renewed into the past: " + rn);
          r.validUntil = rn.validUntil();
        }
        case Output.TxAborted<Envelope> a -> {
          Tx t = txs.get(a.txId());
          assertTrue(t != null && t.node.equals(node), "an abort of another node's transaction " + a);
          assertNull(t.aborted, "a second abort " + a);
          for (Req r : requests.values()) {
            assertTrue(r.tx != t || !r.held, "an aborted transaction still holds " + r.claim);
          }
          t.aborted = a;
          trace.add(now / MS + " " + node + " aborted tx " + a.txId() + " " + a.failure());
        }
        case Output.Holder<Envelope> h -> { }
        case Output.Permits<Envelope> p -> { }
        case Output.Listing<Envelope> l -> assertNull(listings.put(l.queryId(), l), "a second answer " + l);
        case Output.Fact<Envelope> f -> {
          if (f.observation() instanceof Observation.Surrender s) {
            surrenders.add(s);
            trace.add(now / MS + " " + node + " surrender " + s);
          }
        }
      }
    }
    for (String id : cores.keySet()) {
      String conflict = agent(id).table.conflictAmongHolders();
      assertNull(conflict, () -> "AG-1 on " + id + ": " + conflict + "\n" + String.join("\n", trace));
    }
  }

  private void granted(String node, Output.Granted<Envelope> g) {
    Req r = requests.get(g.requestId());
    assertTrue(r != null && r.node.equals(node), "a grant of another node's request " + g);
    assertTrue(!r.held, "a second grant while held: " + g);
    assertNull(r.failed, "a grant after a failure: " + g);
    assertTrue(g.validUntil() > now, "granted already expired: " + g);
    for (Req o : requests.values()) {
      if (o == r || !o.held || now >= o.validUntil || (o.tx != null && o.tx == r.tx)) {
        continue;
      }
      boolean related = LockTable.related(o.claim.path(), r.claim.path());
      boolean conflict = o.claim.mode() != Claim.Mode.READ || r.claim.mode() != Claim.Mode.READ;
      if (related && conflict && sameQuorum(o, r)) {
        fail("AG-3: " + describe(r) + " granted while " + describe(o) + " holds\n" + String.join("\n", trace));
      }
    }
    Long before = endedMax.get(r.claim.path());
    if (before != null && quorumOf(r) != Quorum.ANY) {
      assertTrue(g.fencingToken() > before, "token " + g.fencingToken() + " of " + describe(r)
          + " is not above an ended grant's " + before);
    }
    r.grants.add(g);
    r.held = true;
    r.validUntil = g.validUntil();
    trace.add(now / MS + " " + node + " granted " + describe(r) + " token " + g.fencingToken());
  }

  private static Quorum quorumOf(Req r) {
    return r.tx == null ? Quorum.MAJORITY : r.tx.options.quorum();
  }

  private boolean sameQuorum(Req a, Req b) {
    Quorum qa = quorumOf(a);
    Quorum qb = quorumOf(b);
    List<String> na = a.tx == null || a.tx.options.nodes().isEmpty() ? ids : a.tx.options.nodes();
    List<String> nb = b.tx == null || b.tx.options.nodes().isEmpty() ? ids : b.tx.options.nodes();
    return qa == qb && qa != Quorum.ANY && na.equals(nb);
  }

  static String describe(Req r) {
    return (r.tx == null ? "plain" : "tx " + r.tx.id) + " " + r.claim.mode() + " " + r.claim.path() + " (req " + r.id
        + ")";
  }
}
