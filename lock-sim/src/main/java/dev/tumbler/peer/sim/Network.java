package dev.tumbler.peer.sim;

import dev.tumbler.peer.core.Input;
import dev.tumbler.peer.core.MessageCodec;
import dev.tumbler.peer.core.PeerMessage;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.function.BiConsumer;

/**
 * The links of one run. Each directed link delivers in FIFO order with a random delay and loses what is in flight
 * when it breaks (a cut, a flap, a partition, a crash); both ends are told {@link Input.PeerDown}, and
 * {@link Input.PeerUp} when it comes back, before anything sent over the new link, as TCP gives. How the ends are
 * told is drawn per run: in line with the data, or TCP-like, where each end learns of its links on its own schedule,
 * one direction can break alone, and the node runtime's send guard drops a node's messages to a peer while a report
 * about that peer waits for its core (without the guard, a message sent before the core saw the break could reach
 * the peer over the new link ahead of the restatement). Thin clients talk to members only. Every message goes
 * through the codec and back, and is counted by type.
 */
final class Network<M extends PeerMessage> {

  private final List<SimNode<M>> nodes;
  private final Scheduler scheduler;
  private final Trace trace;
  private final SplittableRandom random;
  private final long maxDelayNanos;
  private final MessageCodec<M> codec;
  /** Steps a node with an input that reached it. */
  private final BiConsumer<SimNode<M>, Input<M>> deliver;
  private final boolean tcpLike;
  /** Per directed link: bumped at every break, so that what was in flight on the old link is lost. */
  private final long[][] epoch;
  /** Per directed link: the last delivery time, which keeps the link FIFO. */
  private final long[][] lastAt;
  private final boolean[][] linkUp;
  private final boolean[][] cut;
  /** Per node and peer, TCP-like: the last time a report about the peer reaches the node, so reports stay in order. */
  private final long[][] notifyAt;
  /** Per node and peer: reports its core has not stepped yet, which hold the send guard. */
  private final int[][] reportsQueued;
  /** Token of the one-way flap in effect on from -> to, or 0. */
  private final long[][] oneWayFlap;
  private long flapTokens;
  /** Bit set: the nodes on side A of the partition. */
  private int partition;
  private final Map<String, Long> messages = new TreeMap<>();

  /**
   * @param random the run's network generator: message delays and TCP-like reports are drawn from it
   * @param tcpLike whether links are reported TCP-like
   */
  Network(List<SimNode<M>> nodes, Scheduler scheduler, Trace trace, SplittableRandom random, boolean tcpLike,
      long maxDelayNanos, MessageCodec<M> codec, BiConsumer<SimNode<M>, Input<M>> deliver) {
    int n = nodes.size();
    this.nodes = nodes;
    this.scheduler = scheduler;
    this.trace = trace;
    this.random = random;
    this.tcpLike = tcpLike;
    this.maxDelayNanos = maxDelayNanos;
    this.codec = codec;
    this.deliver = deliver;
    this.epoch = new long[n][n];
    this.lastAt = new long[n][n];
    this.linkUp = new boolean[n][n];
    this.cut = new boolean[n][n];
    this.notifyAt = new long[n][n];
    this.reportsQueued = new int[n][n];
    this.oneWayFlap = new long[n][n];
  }

  boolean tcpLike() {
    return tcpLike;
  }

  /** How links are reported in this run, for the trace. */
  String reporting() {
    return tcpLike ? "TCP-like link reports (independent per node, one-way breaks, send guard)"
        : "link reports in line with the data (no send guard)";
  }

  /** Messages sent, by type. */
  Map<String, Long> messages() {
    return Map.copyOf(messages);
  }

  void send(SimNode<M> from, String toId, M message) {
    int to = indexOf(toId);
    byte[] bytes = codec.encode(message);
    M decoded = codec.decode(bytes);
    if (!decoded.equals(message)) {
      throw new Violation("codec: " + message + " came back as " + decoded);
    }
    if (tcpLike && reportsQueued[from.index][to] > 0) {
      trace.log(from.id + " -> " + toId + " DROPPED (a link report is queued for the core) " + message);
      return;
    }
    messages.merge(message.typeName(), 1L, Long::sum);
    if (!linkUp[from.index][to] || oneWayFlap[from.index][to] != 0) {
      trace.log(from.id + " -> " + toId + " DROPPED (link down) " + message);
      return;
    }
    long e = epoch[from.index][to];
    // a node hearing from an informed one is informed (the crash rule's memory travels with the messages)
    boolean informed = from.informed;
    SimNode<M> dest = nodes.get(to);
    scheduler.at(channelTime(from.index, to), () -> {
      if (epoch[from.index][to] == e && dest.alive) {
        if (informed) {
          dest.informed = true;
        }
        deliver.accept(dest, new Input.Message<>(from.id, decoded));
      }
    });
  }

  private long channelTime(int from, int to) {
    long at = Math.max(scheduler.now() + 1 + random.nextLong(maxDelayNanos), lastAt[from][to] + 1);
    lastAt[from][to] = at;
    return at;
  }

  int indexOf(String id) {
    return SimNode.named(nodes, id).index;
  }

  /** {@code node} starts a life: no report about its links is queued for its new core. */
  void started(SimNode<M> node) {
    Arrays.fill(reportsQueued[node.index], 0);
  }

  /**
   * {@code node}'s core steps {@code input}: a link report it steps no longer holds the send guard, so the guard lets
   * the restatement it makes now pass, as the node runtime counts.
   */
  void stepping(SimNode<M> node, Input<M> input) {
    switch (input) {
      case Input.PeerUp<M> u -> reportsQueued[node.index][indexOf(u.peer())]--;
      case Input.PeerDown<M> d -> reportsQueued[node.index][indexOf(d.peer())]--;
      default -> { }
    }
  }

  private boolean connected(int a, int b) {
    boolean separated = ((partition >> a) & 1) != ((partition >> b) & 1);
    return nodes.get(a).alive && nodes.get(b).alive && !cut[a][b] && !separated;
  }

  /** Recomputes every link (after a fault, a crash or a start); tells both ends of each link that changed. */
  void relink() {
    int n = nodes.size();
    for (int a = 0; a < n; a++) {
      for (int b = a + 1; b < n; b++) {
        if (nodes.get(a).client && nodes.get(b).client) {
          continue;
        }
        boolean c = connected(a, b);
        if (c != linkUp[a][b]) {
          linkUp[a][b] = c;
          linkUp[b][a] = c;
          epoch[a][b]++;
          epoch[b][a]++;
          oneWayFlap[a][b] = 0;
          oneWayFlap[b][a] = 0;
          trace.log("link " + nodes.get(a).id + "-" + nodes.get(b).id + (c ? " UP" : " DOWN"));
          notifyLink(a, b, c);
          notifyLink(b, a, c);
        }
      }
    }
  }

  /** Tells {@code to} about its link to {@code from}: in order with the messages on that link, or TCP-like. */
  private void notifyLink(int from, int to, boolean up) {
    SimNode<M> dest = nodes.get(to);
    if (!dest.alive) {
      return;
    }
    int inc = dest.incarnation;
    String peer = nodes.get(from).id;
    long at;
    if (tcpLike) {
      at = Math.max(scheduler.now() + 1 + random.nextLong(maxDelayNanos), notifyAt[to][from] + 1);
      notifyAt[to][from] = at;
    } else {
      at = channelTime(from, to);
    }
    reportsQueued[to][from]++;
    scheduler.at(at, () -> {
      if (dest.living(inc)) {
        // still queued for the core until it steps it: a paused node defers it
        deliver.accept(dest, up ? new Input.PeerUp<>(peer) : new Input.PeerDown<>(peer));
      }
    });
  }

  // ---- faults

  void cut(int a, int b) {
    setCut(a, b, true);
    relink();
  }

  void heal(int a, int b) {
    setCut(a, b, false);
    relink();
  }

  /** Cuts {@code a}-{@code b} for {@code downNanos}. */
  void flap(int a, int b, long downNanos) {
    setCut(a, b, true);
    relink();
    scheduler.at(scheduler.now() + downNanos, () -> {
      trace.log("flap over: " + nodes.get(a).id + "-" + nodes.get(b).id);
      setCut(a, b, false);
      relink();
    });
  }

  /**
   * TCP-like only: the direction {@code a} to {@code b} breaks alone for {@code downNanos}, and only {@code a} is
   * told, of the break and of the link's return; {@code b} never learns of either.
   */
  void oneWayFlap(int a, int b, long downNanos) {
    if (!linkUp[a][b] || oneWayFlap[a][b] != 0) {
      return;
    }
    long token = ++flapTokens;
    oneWayFlap[a][b] = token;
    epoch[a][b]++;
    trace.log("link " + nodes.get(a).id + "->" + nodes.get(b).id + " DOWN (one way; only " + nodes.get(a).id
        + " is told)");
    notifyLink(b, a, false);
    scheduler.at(scheduler.now() + downNanos, () -> {
      if (oneWayFlap[a][b] == token) {
        oneWayFlap[a][b] = 0;
        trace.log("link " + nodes.get(a).id + "->" + nodes.get(b).id + " UP again (one way)");
        notifyLink(b, a, true);
      }
    });
  }

  /** @param side bit set of the nodes on one side */
  void partition(int side) {
    partition = side;
    relink();
  }

  /** Ends the partition and every cut. */
  void healAll() {
    clearFaults();
    relink();
  }

  /** Ends the partition and every cut, leaving the links as they are until the next {@link #relink}. */
  void clearFaults() {
    partition = 0;
    for (boolean[] row : cut) {
      Arrays.fill(row, false);
    }
  }

  private void setCut(int a, int b, boolean on) {
    cut[a][b] = on;
    cut[b][a] = on;
  }
}
