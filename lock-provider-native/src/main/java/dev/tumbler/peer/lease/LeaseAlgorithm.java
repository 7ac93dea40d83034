package dev.tumbler.peer.lease;

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
 * The descriptor of {@code lease}: seed 001's lock service of leases on one elected server, with locks cached on
 * their nodes and recalled. Capabilities per NATIVE-ALGORITHMS §5.5. Immutable and thread safe.
 */
public final class LeaseAlgorithm implements Algorithm<LeaseMessage> {

  /** The one instance. */
  public static final LeaseAlgorithm LEASE = new LeaseAlgorithm();

  /** The server is one node: {@code leaders[0]} of a view of one leader. */
  public static final int LEADER_COUNT = 1;

  /** The most members a cluster may have: a practical bound, as for the others (heartbeats and restatements). */
  public static final int MAX_NODES = 1024;

  /**
   * {@code FAIR}: the server grants in arrival order, a cached lock yields to a recall, and a node re-grants its
   * cached lock only while none of its requests waits at the server. {@code LEADER_ELECTION}: the SPI's
   * {@code LockElection} over a lock; the server tells every candidate who leads.
   */
  private static final Set<Capability> CAPABILITIES = Set.copyOf(EnumSet.of(Capability.MUTEX, Capability.FENCING,
      Capability.LEASE_EXPIRY, Capability.LOST_NOTIFICATION, Capability.FAIR, Capability.LEADER_ELECTION,
      Capability.FAULT_TOLERANT));
  private static final LeaseCodec CODEC = new LeaseCodec();

  private LeaseAlgorithm() {}

  @Override
  public String name() {
    return LeaseCore.ALGORITHM;
  }

  @Override
  public String summary() {
    return "seed 001's lease server, elected, with locks cached on their nodes and recalled: 0 messages to take "
        + "again a lock this node released, 4 when it moves between nodes; survives the loss of a minority of nodes";
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
  public MessageCodec<LeaseMessage> codec() {
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

  /** The server knows the tag of the request that uses each lock: it answers who holds a name. */
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
    return new LinkedHashSet<>(LeaseAlgorithmSettings.PARAMETERS);
  }

  @Override
  public AlgorithmSettings settings(LockUrl url) {
    return LeaseAlgorithmSettings.from(url);
  }

  @Override
  public AlgorithmSettings defaults() {
    return LeaseAlgorithmSettings.simulation();
  }

  @Override
  public ElectionSettings election(CoreContext context) {
    return settings(context).election().settings(LEADER_COUNT, context.wallMicros());
  }

  /**
   * {@inheritDoc}
   *
   * @throws IllegalArgumentException if the context gives no lease term
   */
  @Override
  public LeaseCore newCore(CoreContext context) {
    LeaseAlgorithmSettings s = settings(context);
    return new LeaseCore(context.self(), context.peers(), context.leaseNanos(), context.peerTimeoutNanos(),
        s.election().leaderTimeoutNanos(), s.recallIntervalNanos(), s.cache(), context.random());
  }

  private static LeaseAlgorithmSettings settings(CoreContext context) {
    if (context.settings() instanceof LeaseAlgorithmSettings s) {
      return s;
    }
    throw new IllegalArgumentException("lease needs LeaseAlgorithmSettings, not " + context.settings());
  }

  /**
   * {@inheritDoc} §5.6, for a client that is not the server, with the lock moving between nodes: {@code Acquire},
   * {@code Recall}, {@code RecallReply} and {@code Grant}. A node that takes again the lock it released last pays 0,
   * its first take 2, and every entry with {@code cache=false} 3; on the server, 0.
   */
  @Override
  public OptionalInt messagesPerEntry(int nodes) {
    return nodes < 1 ? OptionalInt.empty() : OptionalInt.of(nodes == 1 ? 0 : 4);
  }

  @Override
  public String messagesPerEntryFormula() {
    return "4 (moving), 0 (cached)";
  }

  @Override
  public String toString() {
    return name();
  }
}
