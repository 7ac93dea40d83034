package dev.tumbler.peer.composite;

import dev.tumbler.peer.client.ClientGateway;
import dev.tumbler.peer.client.ClientMessage;
import dev.tumbler.peer.core.Claim;
import dev.tumbler.peer.core.Input;
import dev.tumbler.peer.core.Observation;
import dev.tumbler.peer.core.Output;
import dev.tumbler.peer.core.PeerMessage;
import dev.tumbler.peer.core.ProtocolCore;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * One node's cores behind one {@link ProtocolCore}: each hosted core owns a {@link Channel}, and the
 * composite routes every input to the cores it concerns and tags every message with its channel. Pure, as
 * its cores are.
 *
 * <ul>
 *   <li>A peer's message goes to its envelope's channel; a timer to the channel that set it (timer ids are
 *       {@code channel << 56 | local id}).
 *   <li>{@code Start}, {@code PeerUp}, {@code PeerDown} and {@code CloseSession} go to every core in channel order, the
 *       election first, so that its restatement opens a link before the others'.
 *   <li>A client's request goes to the core its claim is for: {@link Claim.Mode#PERMITS} to
 *       {@link Channel#BUCKETS}, a transaction's claim to {@link Channel#AGENT}, anything else to
 *       {@link Channel#LOCK} (the lock core when a channel is not hosted: it refuses what it cannot serve).
 *       Later inputs about the request ({@code Release}, {@code Cancel}, {@code Renew}) follow it. A
 *       {@code HolderQuery} goes to the lock core.
 *   <li>A view the election core publishes ({@link Observation.View}) is handed to every other core as
 *       {@link Input.View} within the same step, after the election's own outputs.
 * <li>With a {@link ClientGateway}, the messages of thin clients (channel {@link Channel#CLIENT}) go to it, and it
 *     turns them into the inputs above, as a local service's; the outputs about its requests become its replies.
 *     Nothing of an id that is not a member reaches the cores: not its messages, nor its links going up or down.
 * </ul>
 * A composite hosting only the lock core sends exactly the lock core's messages, one envelope byte each.
 * Not thread safe, like every core.
 */
public final class CompositeCore implements ProtocolCore<Envelope> {

  private static final int CHANNEL_SHIFT = 56;
  private static final long LOCAL_TIMER_MASK = (1L << CHANNEL_SHIFT) - 1;

  private final Map<Channel, ProtocolCore<PeerMessage>> cores = new EnumMap<>(Channel.class);
  private final String self;
  /** Where each live request went, and its session (a closed session's requests are forgotten). */
  private final Map<Long, Route> routes = new HashMap<>();
  private final ClientGateway gateway;
  /** The listings under way, by query id: each waits for every core it asked ({@link #list}). */
  private final Map<Long, Gathering> listings = new HashMap<>();
  /** The gateway's inputs for the cores, run in order after the input that made them. */
  private final Deque<Input<Envelope>> fromGateway = new ArrayDeque<>();
  private boolean gatewayTimer;
  private List<Output<Envelope>> out;

  private record Route(Channel channel, String session) {}

  /**
   * @param cores the hosted cores by channel, each with empty state; must include {@link Channel#LOCK}, and
   *     all must be the same node's
   */
  public CompositeCore(Map<Channel, ? extends ProtocolCore<? extends PeerMessage>> cores) {
    this(cores, null);
  }

  /**
   * @param cores as above
   * @param gateway the member's side of the client channel, or null for a member that takes no thin clients
   */
  @SuppressWarnings("unchecked")
  public CompositeCore(Map<Channel, ? extends ProtocolCore<? extends PeerMessage>> cores, ClientGateway gateway) {
    this.gateway = gateway;
    if (!cores.containsKey(Channel.LOCK)) {
      throw new IllegalArgumentException("a composite hosts a lock core: " + cores.keySet());
    }
    String id = null;
    for (Map.Entry<Channel, ? extends ProtocolCore<? extends PeerMessage>> e : cores.entrySet()) {
      ProtocolCore<? extends PeerMessage> c = Objects.requireNonNull(e.getValue(), "core");
      if (id != null && !id.equals(c.self())) {
        throw new IllegalArgumentException("cores of different nodes: " + id + " and " + c.self());
      }
      id = c.self();
      this.cores.put(e.getKey(), (ProtocolCore<PeerMessage>) c);
    }
    this.self = id;
  }

  /** The core on {@code channel}, or null; for tests (to switch on a mutation) and statistics. */
  public ProtocolCore<? extends PeerMessage> core(Channel channel) {
    return cores.get(channel);
  }

  @Override
  public String self() {
    return self;
  }

  /** The lock core's algorithm. */
  @Override
  public String algorithm() {
    return cores.get(Channel.LOCK).algorithm();
  }

  /** The gateway of thin clients, or null; for statistics and tests. */
  public ClientGateway gateway() {
    return gateway;
  }

  @Override
  public List<Output<Envelope>> step(long now, Input<Envelope> input) {
    Objects.requireNonNull(input, "input");
    out = new ArrayList<>();
    try {
      apply(now, input);
      while (!fromGateway.isEmpty()) {
        apply(now, fromGateway.poll());
      }
      if (gateway != null && !gatewayTimer && gateway.sessions() > 0) {
        gatewayTimer = true;
        out.add(new Output.SetTimer<>(timerId(Channel.CLIENT, 0), now + gateway.tickNanos()));
      }
      return out;
    } finally {
      out = null;
      fromGateway.clear();
    }
  }

  private boolean client(String id) {
    return gateway != null && !gateway.isMember(id);
  }

  private void apply(long now, Input<Envelope> input) {
    switch (input) {
      case Input.Message<Envelope> m -> {
        if (client(m.from())) {
          if (m.message().channel() == Channel.CLIENT && m.message().body() instanceof ClientMessage c) {
            ClientGateway.Work<Envelope> work = new ClientGateway.Work<>();
            gateway.message(now, m.from(), c, work);
            run(work);
          }
        } else if (cores.containsKey(m.message().channel())) {
          deliver(now, m.message().channel(), new Input.Message<>(m.from(), m.message().body()));
        }
      }
      case Input.TimerFired<Envelope> t -> {
        Channel c = Channel.of((byte) (t.timerId() >>> CHANNEL_SHIFT));
        if (c == Channel.CLIENT && gateway != null) {
          gatewayTimer = false;
          ClientGateway.Work<Envelope> work = new ClientGateway.Work<>();
          gateway.tick(now, work);
          run(work);
        } else if (c != null && cores.containsKey(c)) {
          deliver(now, c, new Input.TimerFired<>(t.timerId() & LOCAL_TIMER_MASK));
        }
      }
      case Input.Start<Envelope> st -> everyCore(now, new Input.Start<>());
      case Input.Leave<Envelope> l -> {
        if (gateway != null) {
          ClientGateway.Work<Envelope> work = new ClientGateway.Work<>();
          gateway.leave(now, work);
          run(work);
        }
        everyCore(now, new Input.Leave<>());
      }
      case Input.PeerUp<Envelope> u -> {
        if (client(u.peer())) {
          ClientGateway.Work<Envelope> work = new ClientGateway.Work<>();
          gateway.linkUp(now, u.peer(), work);
          run(work);
        } else {
          everyCore(now, new Input.PeerUp<>(u.peer()));
        }
      }
      case Input.PeerDown<Envelope> d -> {
        if (!client(d.peer())) {
          everyCore(now, new Input.PeerDown<>(d.peer()));
        }
      }
      case Input.CloseSession<Envelope> s -> {
        routes.values().removeIf(r -> r.session().equals(s.session()));
        everyCore(now, new Input.CloseSession<>(s.session()));
      }
      case Input.Acquire<Envelope> a -> {
        Channel c = channelFor(a);
        routes.put(a.requestId(), new Route(c, a.session()));
        deliver(now, c, new Input.Acquire<>(a.requestId(), a.session(), a.claim(), a.attempt(), a.txId()));
      }
      case Input.Release<Envelope> r -> deliver(now, routeOf(routes.remove(r.requestId())),
          new Input.Release<>(r.requestId()));
      // after a cancel, nothing more comes about the request: its failure, or nothing if it was granted
      case Input.Cancel<Envelope> c -> deliver(now, routeOf(routes.remove(c.requestId())),
          new Input.Cancel<>(c.requestId()));
      case Input.Renew<Envelope> r -> deliver(now, routeOf(routes.get(r.requestId())),
          new Input.Renew<>(r.requestId()));
      case Input.View<Envelope> v -> viewToOthers(now, v.term(), v.leaders(), v.activeUntil());
      case Input.HolderQuery<Envelope> q -> deliver(now, Channel.LOCK, new Input.HolderQuery<>(q.queryId(), q.name()));
      case Input.ListQuery<Envelope> q -> list(now, q);
      case Input.PermitsQuery<Envelope> q -> deliver(now, semaphores(),
          new Input.PermitsQuery<>(q.queryId(), q.name(), q.limit()));
      case Input.Begin<Envelope> b -> deliver(now, transactions(), new Input.Begin<>(b.txId(), b.session(), b.options()));
      case Input.End<Envelope> e -> deliver(now, transactions(), new Input.End<>(e.txId()));
    }
  }

  /** The gateway's work: its replies sent, its inputs run after the current one. */
  private void run(ClientGateway.Work<Envelope> work) {
    for (ClientGateway.Reply r : work.replies()) {
      out.add(new Output.Send<>(r.to(), new Envelope(Channel.CLIENT, r.message())));
    }
    fromGateway.addAll(work.inputs());
  }

  /** An output about a request, transaction or query: the gateway's when it is of one of its ids, else the driver's. */
  @SuppressWarnings({"unchecked", "rawtypes"})
  private void answer(long now, Output<PeerMessage> o, long id) {
    if (gateway != null && ClientGateway.owns(id)) {
      ClientGateway.Work<Envelope> work = new ClientGateway.Work<>();
      gateway.output(now, (Output) o, work);
      run(work);
    } else {
      out.add((Output) o);
    }
  }

  /**
   * A listing asks every core that serves claims (the lock core, and the semaphore and transaction cores where hosted);
   * the answer goes out once all have answered, known only when every one of them could say.
   */
  private void list(long now, Input.ListQuery<Envelope> q) {
    List<Channel> asked = new ArrayList<>();
    for (Channel c : List.of(Channel.LOCK, Channel.BUCKETS, Channel.AGENT)) {
      if (cores.containsKey(c)) {
        asked.add(c);
      }
    }
    listings.put(q.queryId(), new Gathering(EnumSet.copyOf(asked)));
    for (Channel c : asked) {
      deliver(now, c, new Input.ListQuery<>(q.queryId(), q.prefixes()));
    }
  }

  private void listed(long now, Channel channel, Output.Listing<PeerMessage> l) {
    Gathering g = listings.get(l.queryId());
    if (g == null || !g.waiting.remove(channel)) {
      return;
    }
    g.known &= l.known();
    g.held.addAll(l.held());
    if (g.waiting.isEmpty()) {
      listings.remove(l.queryId());
      answer(now, new Output.Listing<>(l.queryId(), g.known, g.known ? g.held : List.of()), l.queryId());
    }
  }

  /** A listing's answers so far: the cores still to answer, and what those that did said. */
  private static final class Gathering {
    final Set<Channel> waiting;
    boolean known = true;
    final List<Output.Listed> held = new ArrayList<>();

    Gathering(Set<Channel> waiting) {
      this.waiting = waiting;
    }
  }

  private Channel channelFor(Input.Acquire<?> a) {
    Channel wanted = a.claim().mode() == Claim.Mode.PERMITS ? Channel.BUCKETS
        : a.txId() != 0 ? Channel.AGENT : Channel.LOCK;
    return cores.containsKey(wanted) ? wanted : Channel.LOCK;
  }

  /** The core that serves semaphores: the semaphore core, or the lock core when it is one (or cannot answer). */
  private Channel semaphores() {
    return cores.containsKey(Channel.BUCKETS) ? Channel.BUCKETS : Channel.LOCK;
  }

  /** The core that serves transactions: the transaction core, or the lock core when it is one (or refuses them). */
  private Channel transactions() {
    return cores.containsKey(Channel.AGENT) ? Channel.AGENT : Channel.LOCK;
  }

  private static Channel routeOf(Route r) {
    return r == null ? Channel.LOCK : r.channel();
  }

  private void everyCore(long now, Input<PeerMessage> input) {
    for (Channel c : cores.keySet()) { // EnumMap: channel order, the election first
      deliver(now, c, input);
    }
  }

  private void viewToOthers(long now, long term, List<dev.tumbler.peer.core.Leader> leaders, long activeUntil) {
    for (Channel c : cores.keySet()) {
      if (c != Channel.ELECTION) {
        deliver(now, c, new Input.View<>(term, leaders, activeUntil));
      }
    }
  }

  @SuppressWarnings({"unchecked", "rawtypes"})
  private void deliver(long now, Channel channel, Input<PeerMessage> input) {
    List<Output<PeerMessage>> outs = cores.get(channel).step(now, input);
    for (Output<PeerMessage> o : outs) {
      switch (o) {
        case Output.Send<PeerMessage> s -> out.add(new Output.Send<>(s.to(), new Envelope(channel, s.message())));
        case Output.SetTimer<PeerMessage> t -> out.add(new Output.SetTimer<>(timerId(channel, t.timerId()), t.at()));
        case Output.CancelTimer<PeerMessage> t -> out.add(new Output.CancelTimer<>(timerId(channel, t.timerId())));
        case Output.Failed<PeerMessage> f -> {
          routes.remove(f.requestId());
          answer(now, f, f.requestId());
        }
        case Output.Lost<PeerMessage> l -> {
          if (l.reason() != Output.LostReason.DEADLOCK) { // a surrendered claim is asked for again
            routes.remove(l.requestId());
          }
          answer(now, l, l.requestId());
        }
        case Output.TxAborted<PeerMessage> a -> answer(now, a, a.txId());
        case Output.Fact<PeerMessage> f -> {
          out.add((Output) f);
          if (channel == Channel.ELECTION && f.observation() instanceof Observation.View v) {
            viewToOthers(now, v.term(), v.leaders(), v.activeUntil());
          }
        }
        // grants and renewals carry no message: the same record serves every message type
        case Output.Granted<PeerMessage> g -> answer(now, g, g.requestId());
        case Output.Renewed<PeerMessage> r -> answer(now, r, r.requestId());
        case Output.Holder<PeerMessage> h -> answer(now, h, h.queryId());
        case Output.Permits<PeerMessage> p -> answer(now, p, p.queryId());
        case Output.Listing<PeerMessage> l -> listed(now, channel, l);
      }
    }
  }

  private static long timerId(Channel channel, long local) {
    if (local < 0 || local > LOCAL_TIMER_MASK) {
      throw new IllegalStateException("the " + channel.label() + " core's timer id " + local + " is out of range");
    }
    return (long) channel.number() << CHANNEL_SHIFT | local;
  }
}
