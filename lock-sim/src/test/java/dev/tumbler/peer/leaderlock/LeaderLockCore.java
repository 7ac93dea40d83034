package dev.tumbler.peer.leaderlock;

import dev.tumbler.peer.core.Claim;
import dev.tumbler.peer.core.Input;
import dev.tumbler.peer.core.Leader;
import dev.tumbler.peer.core.Output;
import dev.tumbler.peer.core.ProtocolCore;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.random.RandomGenerator;

/**
 * A small elected, leased lock, written only to exercise the simulator's lease and view checks before the
 * real elected algorithms exist: the view's first leader is the one server; every node is a client of it.
 *
 * <h2>Server</h2>
 * While it is the active server ({@code leaders[0]} of its view, {@code now < activeUntil}: V-3) it grants
 * exclusive, read and write claims in arrival order (two claims conflict when they name the same lock and
 * are not both reads), holds each grant for {@code T} from its decision, extends it on a renewal, frees it
 * when released or when {@code T} passes without a renewal, and forgets a waiting request whose client said
 * nothing for {@code T}. Every grant and renewal echoes the highest message number of that client it had
 * processed (L-2). Tokens are {@code term · 2^40 + counter}. When it becomes the server of a new term that
 * does not directly follow a term it served, it knows nothing of the previous server's grants: it grants
 * nothing for {@code T + leaderTimeout} (by then every grant of an earlier server has closed on its
 * client's clock, since that server stopped being active before the new term existed: V-2).
 *
 * <h2>Client</h2>
 * Sends its requests to the server of its view (a local server by a function call, R-5), again whenever the
 * server changes or its link comes back, and {@code Waiting} every T/3 while a request waits (L-4). A grant
 * is trusted from the send time of the echoed message for {@code T·3/4} (L-3), renewed by the same echo
 * (L-5), and reported {@code Lost(EXPIRED)} when that passes (L-6); a grant that arrives already expired is
 * given back and asked for again. With no reachable server for {@code peerTimeout} a waiting request fails
 * {@code UNAVAILABLE}.
 *
 * <p>Test-only mutation switches break one rule each; the simulator must catch every one.
 */
final class LeaderLockCore implements ProtocolCore<LeaderLockMessage> {

  static final String ALGORITHM = "test-leader-lock";
  static final long TIMER = 1;
  private static final long NONE = Long.MIN_VALUE;
  private static final int COUNTER_BITS = 40;

  /** Mutation (a): a new server grants at once, without waiting out its predecessor's grants. */
  boolean mutationNoGrace;
  /** Mutation (b): the client trusts a grant or renewal from the moment it receives it, not from its echo. */
  boolean mutationTrustFromReceipt;
  /** Mutation (c): the client never reports a grant lost. */
  boolean mutationNeverLost;

  private final String self;
  private final long leaseNanos;
  private final long trustNanos;
  private final long peerTimeoutNanos;
  private final long leaderTimeoutNanos;
  private final long incarnation;
  private final Set<String> up = new HashSet<>();

  // the view
  private long viewTerm;
  private String server;
  private long activeUntil = NONE;

  // the client
  private long seq;
  private final TreeMap<Long, Long> sentAt = new TreeMap<>();
  private final Map<Long, Own> own = new LinkedHashMap<>();

  // the server
  private long servingTerm = -1;
  private long graceUntil = NONE;
  private long counter;
  private final Map<String, Client> clients = new HashMap<>();
  private final List<Wait> waits = new ArrayList<>();
  private final List<Hold> holds = new ArrayList<>();

  private long timerAt = NONE;
  private final ArrayDeque<LeaderLockMessage> local = new ArrayDeque<>();
  private List<Output<LeaderLockMessage>> out;

  LeaderLockCore(String self, Collection<String> peers, long leaseNanos, long peerTimeoutNanos,
      long leaderTimeoutNanos, RandomGenerator random) {
    this.self = Objects.requireNonNull(self, "self");
    if (leaseNanos <= 0) {
      throw new IllegalArgumentException("a leased algorithm needs leaseNanos > 0: " + leaseNanos);
    }
    this.leaseNanos = leaseNanos;
    this.trustNanos = leaseNanos / 4 * 3 + leaseNanos % 4 * 3 / 4;
    this.peerTimeoutNanos = peerTimeoutNanos;
    this.leaderTimeoutNanos = leaderTimeoutNanos;
    this.incarnation = random.nextLong();
  }

  @Override
  public String self() {
    return self;
  }

  @Override
  public String algorithm() {
    return ALGORITHM;
  }

  @Override
  public List<Output<LeaderLockMessage>> step(long now, Input<LeaderLockMessage> input) {
    out = new ArrayList<>();
    try {
      switch (input) {
        case Input.Message<LeaderLockMessage> m -> receive(now, m.from(), m.message());
        case Input.TimerFired<LeaderLockMessage> t -> timerAt = NONE;
        case Input.Start<LeaderLockMessage> s -> { }
        case Input.Leave<LeaderLockMessage> l -> { }
        case Input.PeerUp<LeaderLockMessage> u -> {
          up.add(u.peer());
          if (u.peer().equals(server)) {
            resendPending();
          }
        }
        case Input.PeerDown<LeaderLockMessage> d -> {
          up.remove(d.peer());
          if (d.peer().equals(server)) {
            resendPending();
          }
        }
        case Input.Acquire<LeaderLockMessage> a -> acquire(now, a);
        case Input.Release<LeaderLockMessage> r -> giveUp(now, r.requestId(), false);
        case Input.Cancel<LeaderLockMessage> c -> giveUp(now, c.requestId(), true);
        case Input.Renew<LeaderLockMessage> r -> renew(now, r.requestId());
        case Input.CloseSession<LeaderLockMessage> s -> {
          for (Own o : List.copyOf(own.values())) {
            if (o.session.equals(s.session())) {
              own.remove(o.id);
              toServer(now, new LeaderLockMessage.Release(incarnation, nextSeq(now), o.id));
            }
          }
        }
        case Input.View<LeaderLockMessage> v -> view(now, v.term(), v.leaders(), v.activeUntil());
        case Input.HolderQuery<LeaderLockMessage> q -> out.add(Output.Holder.unknown(q));
        case Input.PermitsQuery<LeaderLockMessage> q -> out.add(Output.Permits.unknown(q));
        case Input.ListQuery<LeaderLockMessage> q -> out.add(Output.Listing.unknown(q));
        case Input.Begin<LeaderLockMessage> b -> out.add(new Output.TxAborted<>(b.txId(), Output.Failure.UNAVAILABLE,
            java.util.Set.of(), "the leader lock serves no transactions"));
        case Input.End<LeaderLockMessage> e -> { }
      }
      do {
        while (!local.isEmpty()) {
          receive(now, self, local.poll());
        }
        serve(now);
        client(now);
      } while (!local.isEmpty());
      timer(now);
      return out;
    } finally {
      out = null;
    }
  }

  // ---- the view

  private void view(long now, long term, List<Leader> leaders, long activeUntil) {
    this.activeUntil = activeUntil;
    if (term == viewTerm) {
      return;
    }
    String next = leaders.isEmpty() ? null : leaders.get(0).nodeId();
    if (self.equals(next)) {
      if (servingTerm < 0 || servingTerm != viewTerm || term != viewTerm + 1) {
        // a new stint: the grants of whoever served before are unknown here, so wait until they closed
        waits.clear();
        holds.clear();
        clients.clear();
        graceUntil = now + leaseNanos + leaderTimeoutNanos;
      }
      servingTerm = term;
      counter = 0;
    } else {
      servingTerm = -1;
      waits.clear();
      holds.clear();
      clients.clear();
    }
    viewTerm = term;
    if (!Objects.equals(next, server)) {
      server = next;
      resendPending();
    }
  }

  private boolean active(long now) {
    return servingTerm >= 0 && servingTerm == viewTerm && now < activeUntil;
  }

  // ---- the client

  private final class Own {
    final long id;
    final String session;
    final Claim claim;
    final boolean attempt;
    boolean held;
    boolean sent;
    long lastSent = NONE;
    long noServerSince = NONE;
    long trustedFrom;
    long validUntil;

    Own(long id, String session, Claim claim, boolean attempt) {
      this.id = id;
      this.session = session;
      this.claim = claim;
      this.attempt = attempt;
    }
  }

  private void acquire(long now, Input.Acquire<LeaderLockMessage> a) {
    Claim c = a.claim();
    if (c.path().size() != 1 || c.mode() == Claim.Mode.PERMITS || a.txId() != 0) {
      out.add(new Output.Failed<>(a.requestId(), c.name(), Output.Failure.UNAVAILABLE, Set.of(),
          ALGORITHM + " serves locks and read/write locks on one name only, not " + c));
      return;
    }
    own.put(a.requestId(), new Own(a.requestId(), a.session(), c, a.attempt()));
  }

  private void giveUp(long now, long id, boolean cancel) {
    Own o = own.remove(id);
    if (o == null) {
      return;
    }
    if (cancel && !o.held) {
      out.add(new Output.Failed<>(id, o.claim.name(), Output.Failure.CANCELLED, Set.of()));
    }
    toServer(now, new LeaderLockMessage.Release(incarnation, nextSeq(now), id));
  }

  private void renew(long now, long id) {
    Own o = own.get(id);
    if (o == null || !o.held) {
      out.add(new Output.Lost<>(id, o == null ? "" : o.claim.name(), Output.LostReason.REVOKED, "not held"));
      return;
    }
    toServer(now, new LeaderLockMessage.Renew(incarnation, nextSeq(now), id));
  }

  private void resendPending() {
    for (Own o : own.values()) {
      o.sent = false;
    }
  }

  private boolean serverReachable() {
    return server != null && (server.equals(self) || up.contains(server));
  }

  /** The client's time-driven duties: send, keep alive, give up without a server, lose what expired. */
  private void client(long now) {
    for (Own o : List.copyOf(own.values())) {
      if (o.held) {
        if (now >= o.validUntil && !mutationNeverLost) {
          own.remove(o.id);
          out.add(new Output.Lost<>(o.id, o.claim.name(), Output.LostReason.EXPIRED, "not renewed in time"));
          toServer(now, new LeaderLockMessage.Release(incarnation, nextSeq(now), o.id));
        }
        continue;
      }
      if (!serverReachable()) {
        o.sent = false;
        if (o.noServerSince == NONE) {
          o.noServerSince = now;
        } else if (now - o.noServerSince >= peerTimeoutNanos) {
          own.remove(o.id);
          out.add(new Output.Failed<>(o.id, o.claim.name(), Output.Failure.UNAVAILABLE,
              server == null || server.equals(self) ? Set.of() : Set.of(server), "no reachable server"));
        }
        continue;
      }
      o.noServerSince = NONE;
      if (!o.sent) {
        o.sent = true;
        o.lastSent = now;
        toServer(now, new LeaderLockMessage.Acquire(incarnation, nextSeq(now), o.id, o.claim.name(), o.claim.mode(),
            o.attempt));
      } else if (now - o.lastSent >= leaseNanos / 3) {
        o.lastSent = now;
        toServer(now, new LeaderLockMessage.Waiting(incarnation, nextSeq(now), o.id, o.claim.name(), o.claim.mode(),
            o.attempt));
      }
    }
  }

  private long nextSeq(long now) {
    seq++;
    sentAt.put(seq, now);
    return seq;
  }

  private void toServer(long now, LeaderLockMessage m) {
    if (server == null) {
      return;
    }
    if (server.equals(self)) {
      local.add(m);
    } else if (up.contains(server)) {
      out.add(new Output.Send<>(server, m));
    }
  }

  /** A reply of the server reached this client. */
  private void reply(long now, String from, LeaderLockMessage m) {
    if (!from.equals(server)) {
      if (m instanceof LeaderLockMessage.Grant g && !from.equals(self)) {
        out.add(new Output.Send<>(from, new LeaderLockMessage.Release(incarnation, nextSeq(now), g.requestId())));
      }
      return; // an earlier server's answer: its grants are given back, the rest is stale
    }
    switch (m) {
      case LeaderLockMessage.Grant g -> {
        Own o = own.get(g.requestId());
        if (o == null) {
          toServer(now, new LeaderLockMessage.Release(incarnation, nextSeq(now), g.requestId()));
          return;
        }
        Long from0 = mutationTrustFromReceipt ? Long.valueOf(now) : sentAt.get(g.echo());
        if (o.held || from0 == null) {
          return;
        }
        forgetBefore(g.echo());
        if (from0 + trustNanos <= now) {
          // over before it arrived (this node was paused): nobody may use it; asking again makes the server
          // grant it again with a fresh echo (a Release here could overtake a Waiting already on its way and
          // free the grant that Waiting renews)
          o.sent = false;
          return;
        }
        o.held = true;
        o.trustedFrom = from0;
        o.validUntil = from0 + trustNanos;
        out.add(new Output.Granted<>(o.id, o.claim.name(), g.token(), 1, o.trustedFrom, o.validUntil));
      }
      case LeaderLockMessage.Renewed r -> {
        Own o = own.get(r.requestId());
        Long from0 = mutationTrustFromReceipt ? Long.valueOf(now) : sentAt.get(r.echo());
        if (o == null || !o.held || from0 == null) {
          return;
        }
        forgetBefore(r.echo());
        if (now >= o.validUntil || from0 < o.trustedFrom) {
          return; // too late to revive it (L-6), or older than what was reported
        }
        o.trustedFrom = from0;
        o.validUntil = from0 + trustNanos;
        out.add(new Output.Renewed<>(o.id, o.trustedFrom, o.validUntil));
      }
      case LeaderLockMessage.Busy b -> {
        Own o = own.get(b.requestId());
        if (o != null && !o.held && o.attempt) {
          own.remove(o.id);
          out.add(new Output.Failed<>(o.id, o.claim.name(), Output.Failure.CONTENDED, Set.of()));
        }
      }
      case LeaderLockMessage.Revoked r -> {
        Own o = own.get(r.requestId());
        if (o != null && o.held && !mutationNeverLost) {
          own.remove(o.id);
          out.add(new Output.Lost<>(o.id, o.claim.name(), Output.LostReason.REVOKED, "the server does not know it"));
        }
      }
      default -> { }
    }
  }

  private void forgetBefore(long echo) {
    sentAt.headMap(echo).clear();
  }

  // ---- the server

  private static final class Client {
    final long inc;
    long lastSeq;

    Client(long inc) {
      this.inc = inc;
    }
  }

  private record Key(String client, long requestId) {}

  private static final class Wait {
    final Key key;
    final String name;
    final Claim.Mode mode;
    final boolean attempt;
    long lastHeard;

    Wait(Key key, String name, Claim.Mode mode, boolean attempt, long lastHeard) {
      this.key = key;
      this.name = name;
      this.mode = mode;
      this.attempt = attempt;
      this.lastHeard = lastHeard;
    }
  }

  private static final class Hold {
    final Key key;
    final String name;
    final Claim.Mode mode;
    long token;
    long expiry;

    Hold(Key key, String name, Claim.Mode mode, long token, long expiry) {
      this.key = key;
      this.name = name;
      this.mode = mode;
      this.token = token;
      this.expiry = expiry;
    }
  }

  private void receive(long now, String from, LeaderLockMessage m) {
    switch (m) {
      case LeaderLockMessage.Acquire a -> request(now, from, a.inc(), a.seq(), a.requestId(), a.name(), a.mode(),
          a.attempt(), true);
      case LeaderLockMessage.Waiting w -> request(now, from, w.inc(), w.seq(), w.requestId(), w.name(), w.mode(),
          w.attempt(), false);
      case LeaderLockMessage.Renew r -> {
        Client c = client(from, r.inc(), r.seq());
        if (c == null || !active(now)) {
          return; // not the server, or not active: no answer, the client's grant runs out
        }
        Hold h = hold(new Key(from, r.requestId()));
        if (h == null) {
          answer(from, new LeaderLockMessage.Revoked(servingTerm, r.requestId()));
        } else {
          h.expiry = now + leaseNanos;
          answer(from, new LeaderLockMessage.Renewed(servingTerm, r.requestId(), c.lastSeq));
        }
      }
      case LeaderLockMessage.Release r -> {
        if (client(from, r.inc(), r.seq()) != null) {
          Key k = new Key(from, r.requestId());
          holds.removeIf(h -> h.key.equals(k));
          waits.removeIf(w -> w.key.equals(k));
        }
      }
      default -> reply(now, from, m);
    }
  }

  /** The client record of {@code from} after its message {@code seq}; null when this node serves no term. */
  private Client client(String from, long inc, long seq) {
    if (servingTerm < 0) {
      return null;
    }
    Client c = clients.get(from);
    if (c == null || c.inc != inc) {
      // a client that restarted: what its earlier incarnation held died with it
      holds.removeIf(h -> h.key.client().equals(from));
      waits.removeIf(w -> w.key.client().equals(from));
      c = new Client(inc);
      clients.put(from, c);
    }
    c.lastSeq = Math.max(c.lastSeq, seq);
    return c;
  }

  /**
   * A request asked for ({@code again}: an Acquire, sent again after a break or to a new server) or still
   * wanted (a Waiting, which may have crossed its grant).
   */
  private void request(long now, String from, long inc, long seq, long id, String name, Claim.Mode mode,
      boolean attempt, boolean again) {
    Client c = client(from, inc, seq);
    if (c == null) {
      return;
    }
    Key k = new Key(from, id);
    Hold h = hold(k);
    if (h != null) {
      if (again && active(now)) {
        // its grant was lost in a break, or arrived too late to be used: grant it again, now, so with a fresh
        // echo and a new token (grants of the name made and ended since must not be above it: F2)
        h.expiry = now + leaseNanos;
        h.token = servingTerm << COUNTER_BITS | ++counter;
        answer(from, new LeaderLockMessage.Grant(servingTerm, id, c.lastSeq, h.token));
      }
      return;
    }
    for (Wait w : waits) {
      if (w.key.equals(k)) {
        w.lastHeard = now;
        return;
      }
    }
    waits.add(new Wait(k, name, mode, attempt, now));
  }

  private Hold hold(Key k) {
    for (Hold h : holds) {
      if (h.key.equals(k)) {
        return h;
      }
    }
    return null;
  }

  /** Frees what expired and, while active and past the grace, grants what it can in arrival order. */
  private void serve(long now) {
    if (servingTerm < 0) {
      return;
    }
    holds.removeIf(h -> now >= h.expiry);
    waits.removeIf(w -> now - w.lastHeard >= leaseNanos);
    if (!active(now) || now < graceUntil && !mutationNoGrace) {
      return;
    }
    List<Wait> before = new ArrayList<>();
    for (Iterator<Wait> it = waits.iterator(); it.hasNext(); ) {
      Wait w = it.next();
      boolean free = true;
      for (Hold h : holds) {
        free &= !conflicts(h.name, h.mode, w.name, w.mode);
      }
      for (Wait earlier : before) {
        free &= !conflicts(earlier.name, earlier.mode, w.name, w.mode);
      }
      if (free) {
        it.remove();
        long token = servingTerm << COUNTER_BITS | ++counter;
        holds.add(new Hold(w.key, w.name, w.mode, token, now + leaseNanos));
        answer(w.key.client(), new LeaderLockMessage.Grant(servingTerm, w.key.requestId(),
            clients.get(w.key.client()).lastSeq, token));
      } else if (w.attempt) {
        it.remove();
        answer(w.key.client(), new LeaderLockMessage.Busy(servingTerm, w.key.requestId()));
      } else {
        before.add(w);
      }
    }
  }

  private static boolean conflicts(String a, Claim.Mode am, String b, Claim.Mode bm) {
    return a.equals(b) && !(am == Claim.Mode.READ && bm == Claim.Mode.READ);
  }

  private void answer(String client, LeaderLockMessage m) {
    if (client.equals(self)) {
      local.add(m);
    } else if (up.contains(client)) {
      out.add(new Output.Send<>(client, m));
    }
  }

  // ---- the one timer

  private void timer(long now) {
    long next = NONE;
    for (Own o : own.values()) {
      if (o.held) {
        next = earliest(next, mutationNeverLost ? NONE : o.validUntil);
      } else if (o.noServerSince != NONE) {
        next = earliest(next, o.noServerSince + peerTimeoutNanos);
      } else if (o.sent) {
        next = earliest(next, o.lastSent + leaseNanos / 3);
      }
    }
    if (servingTerm >= 0) {
      for (Hold h : holds) {
        next = earliest(next, h.expiry);
      }
      for (Wait w : waits) {
        next = earliest(next, w.lastHeard + leaseNanos);
      }
      if (graceUntil > now) {
        next = earliest(next, graceUntil);
      }
    }
    if (next != timerAt) {
      out.add(next == NONE ? new Output.CancelTimer<>(TIMER) : new Output.SetTimer<>(TIMER, next));
      timerAt = next;
    }
  }

  private static long earliest(long a, long b) {
    return a == NONE ? b : b == NONE ? a : Math.min(a, b);
  }
}
