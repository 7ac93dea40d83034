package dev.tumbler.peer.composite;

import dev.tumbler.peer.algorithm.Algorithm;
import dev.tumbler.peer.buckets.BucketsAlgorithm;
import dev.tumbler.peer.buckets.BucketsCodec;
import dev.tumbler.peer.buckets.BucketsCore;
import dev.tumbler.peer.algorithm.CoreContext;
import dev.tumbler.peer.client.ClientCodec;
import dev.tumbler.peer.client.ClientGateway;
import dev.tumbler.peer.core.MessageCodec;
import dev.tumbler.peer.core.PeerMessage;
import dev.tumbler.peer.core.ProtocolCore;
import dev.tumbler.peer.election.ElectionCodec;
import dev.tumbler.peer.election.ElectionCore;
import dev.tumbler.peer.election.ElectionSettings;
import java.util.EnumMap;
import java.util.Map;

/**
 * What a node of a given lock algorithm hosts, and the codec of its envelopes: the one place the node
 * runtime and the simulator both build a node's core from, so that the simulator runs exactly what a node
 * runs. A node hosts its lock core, an election core when its lock algorithm elects leaders, and, with
 * {@link Semaphores}, the semaphore core ({@code buckets}) with an election of its own when the lock algorithm has
 * none. The node runtime always hosts semaphores; the simulator leaves them out of runs that use none (the cores of
 * different channels never talk to each other, so a lock core runs the same with or without them).
 */
public final class Hosting {

  private static final ElectionCodec ELECTION_CODEC = new ElectionCodec();
  private static final BucketsCodec BUCKETS_CODEC = new BucketsCodec();
  private static final ClientCodec CLIENT_CODEC = new ClientCodec();

  private Hosting() {}

  /** A node's composite core for {@code lockAlgorithm} alone (and its election), with empty state. */
  public static CompositeCore core(Algorithm<?> lockAlgorithm, CoreContext context) {
    return core(lockAlgorithm, context, null);
  }

  /**
   * A node's composite core for {@code lockAlgorithm}, with empty state, serving semaphores as {@code semaphores}
   * says (none when null; a lock algorithm that serves semaphores itself serves them as its own settings say).
   */
  public static CompositeCore core(Algorithm<?> lockAlgorithm, CoreContext context, Semaphores semaphores) {
    Map<Channel, ProtocolCore<? extends PeerMessage>> cores = new EnumMap<>(Channel.class);
    ElectionSettings election = null;
    if (lockAlgorithm.elected()) {
      election = lockAlgorithm.election(context);
    } else if (semaphores != null) {
      election = semaphores.election().settings(BucketsAlgorithm.LEADER_COUNT, context);
    }
    if (election != null) {
      // a single-server core needs its server (leaders[0]) to fail over even in a view of several leaders
      boolean singleServer = semaphores != null || lockAlgorithm.singleServer();
      cores.put(Channel.ELECTION, new ElectionCore(context.self(), context.peers(), election, context.random(),
          singleServer));
    }
    cores.put(Channel.LOCK, lockAlgorithm.newCore(context));
    if (hostsSemaphores(lockAlgorithm, semaphores)) {
      cores.put(Channel.BUCKETS, new BucketsCore(context.self(), context.peers(), semaphores.leaseNanos(),
          context.peerTimeoutNanos(), election.leaderTimeoutNanos(), semaphores.bucketSize(), false,
          context.random()));
    }
    // every member takes thin clients (CLIENTS.md); the gateway refuses them itself when the algorithm cannot serve
    return new CompositeCore(cores, new ClientGateway(context.self(), context.peers(), lockAlgorithm.name(),
        context.leaseNanos(), lockAlgorithm.leased()));
  }

  /** The codec of the envelopes a node of {@code lockAlgorithm} alone sends and receives. */
  public static EnvelopeCodec codec(Algorithm<?> lockAlgorithm) {
    return codec(lockAlgorithm, null);
  }

  /** The codec of the envelopes a node of {@code lockAlgorithm} serving {@code semaphores} sends and receives. */
  public static EnvelopeCodec codec(Algorithm<?> lockAlgorithm, Semaphores semaphores) {
    Map<Channel, MessageCodec<? extends PeerMessage>> codecs = new EnumMap<>(Channel.class);
    if (lockAlgorithm.elected() || semaphores != null) {
      codecs.put(Channel.ELECTION, ELECTION_CODEC);
    }
    codecs.put(Channel.LOCK, lockAlgorithm.codec());
    if (hostsSemaphores(lockAlgorithm, semaphores)) {
      codecs.put(Channel.BUCKETS, BUCKETS_CODEC);
    }
    codecs.put(Channel.CLIENT, CLIENT_CODEC);
    return new EnvelopeCodec(codecs);
  }

  /** The codec of a thin client's envelopes: the client channel only (CLIENTS.md D1). */
  public static EnvelopeCodec clientCodec() {
    return new EnvelopeCodec(Map.of(Channel.CLIENT, CLIENT_CODEC));
  }

  private static boolean hostsSemaphores(Algorithm<?> lockAlgorithm, Semaphores semaphores) {
    return semaphores != null && lockAlgorithm != BucketsAlgorithm.BUCKETS;
  }
}
