package dev.tumbler.peer.buckets;

import dev.tumbler.lock.Capability;
import dev.tumbler.lock.spi.LockUrl;
import dev.tumbler.peer.algorithm.Algorithm;
import dev.tumbler.peer.algorithm.AlgorithmSettings;
import dev.tumbler.peer.algorithm.CoreContext;
import dev.tumbler.peer.core.MessageCodec;
import dev.tumbler.peer.election.ElectionSettings;
import java.util.EnumSet;
import java.util.LinkedHashSet;
import java.util.OptionalInt;
import java.util.Set;

/**
 * The descriptor of {@code buckets} as a lock algorithm: seed 002's bucketed counters on one elected server, serving
 * semaphores and, as one-permit semaphores of their own, locks. Every native node runs the same core for its
 * semaphores whatever its lock algorithm ({@link dev.tumbler.peer.composite.Hosting}); with {@code algorithm=buckets}
 * it serves the locks too. Capabilities per NATIVE-ALGORITHMS §6.5. Immutable and thread safe.
 */
public final class BucketsAlgorithm implements Algorithm<BucketsMessage> {

  /** The one instance. */
  public static final BucketsAlgorithm BUCKETS = new BucketsAlgorithm();

  /** The server is one node: {@code leaders[0]} of a view of one leader. */
  public static final int LEADER_COUNT = 1;

  /** The most members a cluster may have: a practical bound, as for the others (heartbeats and restatements). */
  public static final int MAX_NODES = 1024;

  /**
   * {@code FAIR}: the server grants in arrival order, a request that does not fit holding back the ones behind it.
   * {@code LEADER_ELECTION}: the SPI's {@code LockElection} over a lock; the server tells every candidate who
   * leads.
   */
  private static final Set<Capability> CAPABILITIES = Set.copyOf(EnumSet.of(Capability.MUTEX, Capability.SEMAPHORE,
      Capability.FENCING, Capability.LEASE_EXPIRY, Capability.LOST_NOTIFICATION, Capability.FAIR,
      Capability.LEADER_ELECTION, Capability.FAULT_TOLERANT));
  private static final BucketsCodec CODEC = new BucketsCodec();

  private BucketsAlgorithm() {}

  @Override
  public String name() {
    return BucketsCore.ALGORITHM;
  }

  @Override
  public String summary() {
    return "seed 002's bucketed counters on one elected server: semaphores, and locks as one-permit semaphores; "
        + "3 messages per entry; survives the loss of a minority of nodes";
  }

  @Override
  public Set<Capability> capabilities() {
    return CAPABILITIES;
  }

  @Override
  public int maxNodes() {
    return MAX_NODES;
  }

  @Override
  public String maxNodesReason() {
    return "every member exchanges heartbeats with the leader and restates to the server";
  }

  @Override
  public MessageCodec<BucketsMessage> codec() {
    return CODEC;
  }

  @Override
  public boolean leased() {
    return true;
  }

  @Override
  public boolean elected() {
    return true;
  }

  /** The server knows the tag of the grant that holds each lock: it answers who holds a name. */
  @Override
  public boolean answersHolderQueries() {
    return true;
  }

  @Override
  public boolean singleServer() {
    return true;
  }

  @Override
  public Set<String> parameters() {
    return new LinkedHashSet<>(BucketsSettings.PARAMETERS);
  }

  @Override
  public AlgorithmSettings settings(LockUrl url) {
    return BucketsSettings.from(url);
  }

  @Override
  public AlgorithmSettings defaults() {
    return BucketsSettings.simulation();
  }

  @Override
  public ElectionSettings election(CoreContext context) {
    return settings(context).election().settings(LEADER_COUNT, context.wallMicros());
  }

  /**
   * {@inheritDoc}
   *
   * @throws IllegalArgumentException if the context gives no lease term: a semaphore's permits always have one
   */
  @Override
  public BucketsCore newCore(CoreContext context) {
    BucketsSettings s = settings(context);
    return new BucketsCore(context.self(), context.peers(), context.leaseNanos(), context.peerTimeoutNanos(),
        s.election().leaderTimeoutNanos(), s.bucketSize(), true, context.random());
  }

  private static BucketsSettings settings(CoreContext context) {
    if (context.settings() instanceof BucketsSettings s) {
      return s;
    }
    throw new IllegalArgumentException("buckets needs BucketsSettings, not " + context.settings());
  }

  /**
   * {@inheritDoc} §6.6: {@code Acquire}, {@code Grant} and {@code Release} for a client that is not the server; 0 on
   * the server. The figure returned is the one every node but the server pays.
   */
  @Override
  public OptionalInt messagesPerEntry(int nodes) {
    return nodes < 1 ? OptionalInt.empty() : OptionalInt.of(nodes == 1 ? 0 : 3);
  }

  @Override
  public String messagesPerEntryFormula() {
    return "3";
  }

  @Override
  public String toString() {
    return name();
  }
}
