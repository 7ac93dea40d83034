package dev.tumbler.peer.bakery;

import dev.tumbler.lock.Capability;
import dev.tumbler.lock.spi.LockUrl;
import dev.tumbler.peer.algorithm.Algorithm;
import dev.tumbler.peer.algorithm.AlgorithmSettings;
import dev.tumbler.peer.algorithm.CoreContext;
import dev.tumbler.peer.core.Claim;
import dev.tumbler.peer.core.MessageCodec;
import dev.tumbler.peer.election.ElectionParameters;
import dev.tumbler.peer.election.ElectionSettings;
import java.time.Duration;
import java.util.EnumSet;
import java.util.LinkedHashSet;
import java.util.OptionalInt;
import java.util.Set;

/**
 * The descriptor of {@code bakery}: snaplock's quorum bakery among three elected leaders. Grants have a term
 * ({@code leaseTime}), so every node also runs the election core; one of the three leaders may be lost at any
 * time without a pause. Capabilities per NATIVE-ALGORITHMS §3.5. Immutable and thread safe.
 */
public final class BakeryAlgorithm implements Algorithm<BakeryMessage> {

  /** The one instance. */
  public static final BakeryAlgorithm BAKERY = new BakeryAlgorithm();

  /** Leaders per view (seed 003: three). */
  public static final int LEADER_COUNT = 3;

  /**
   * The most members a cluster may have. The token layout ({@code term·2^34 + H·2^2 + ownerSlot}) bounds the
   * leaders (a 2-bit slot, three leaders), not the members; this is a practical bound, as Lamport's: every
   * member exchanges heartbeats and restatements with the leaders.
   */
  public static final int MAX_NODES = 1024;

  /**
   * {@code READ_WRITE}: read claims share, write claims (hard, soft, timed-soft) exclude, by the activation rule.
   * {@code LEADER_ELECTION}: an election is the SPI's {@code LockElection} over an exclusive claim tagged with the
   * candidate id, and a candidate that does not lead learns who does from its owner leader's table
   * ({@link #answersHolderQueries()}).
   */
  private static final Set<Capability> CAPABILITIES = Set.copyOf(EnumSet.of(Capability.MUTEX,
      Capability.READ_WRITE, Capability.FENCING, Capability.LEASE_EXPIRY, Capability.LOST_NOTIFICATION, Capability.FAIR,
      Capability.LEADER_ELECTION, Capability.FAULT_TOLERANT));
  private static final BakeryCodec CODEC = new BakeryCodec();

  private BakeryAlgorithm() {}

  @Override
  public String name() {
    return BakeryCore.ALGORITHM;
  }

  @Override
  public String summary() {
    return "snaplock's quorum bakery among three elected leaders, 11(L-1)+3 messages per entry; survives the loss "
        + "of one leader (experimental)";
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
    return "every member exchanges heartbeats and restatements with the leaders (fencing tokens bound only the "
        + "three leaders, by a 2-bit owner slot)";
  }

  @Override
  public MessageCodec<BakeryMessage> codec() {
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

  /**
   * {@inheritDoc} The leader that would own the asking node's requests on the name answers with the tag of the
   * active ticket with the largest key in its table (tickets carry their claim's tag to every leader and over a
   * hand-over); empty while it does not act as a leader.
   */
  @Override
  public boolean answersHolderQueries() {
    return true;
  }

  @Override
  public Set<String> parameters() {
    return new LinkedHashSet<>(BakerySettings.PARAMETERS);
  }

  @Override
  public AlgorithmSettings settings(LockUrl url) {
    return BakerySettings.from(url);
  }

  @Override
  public AlgorithmSettings defaults() {
    return BakerySettings.simulation();
  }

  @Override
  public ElectionSettings election(CoreContext context) {
    return settings(context).election().settings(LEADER_COUNT, context.wallMicros());
  }

  /** Appendix C's floor for the terms of a cluster that starts with no informed member ({@link ElectionParameters}). */
  static long initialTerm(long wallMicros) {
    return ElectionParameters.initialTerm(wallMicros);
  }

  /**
   * {@inheritDoc}
   *
   * @throws IllegalArgumentException if the context gives no lease term ({@code leaseNanos} 0): bakery grants
   *     always have one
   */
  @Override
  public BakeryCore newCore(CoreContext context) {
    BakerySettings s = settings(context);
    return new BakeryCore(context.self(), context.peers(), context.leaseNanos(), context.peerTimeoutNanos(),
        s.leaderTimeoutNanos(), context.random());
  }

  private static BakerySettings settings(CoreContext context) {
    if (context.settings() instanceof BakerySettings s) {
      return s;
    }
    throw new IllegalArgumentException("bakery needs BakerySettings, not " + context.settings());
  }

  /**
   * {@inheritDoc} §3.6: {@code 11(L−1) + 3c} with {@code L = min(3, nodes)} leaders and {@code c} = 0 on the
   * name's owner leader and 1 elsewhere. Averaged over the nodes a client may sit on, the owner being one node
   * in {@code nodes}, that is not an integer for {@code nodes > 1}; the figure returned is the one for a client
   * that is not the owner leader ({@code 11(L−1) + 3}), which every node but one pays.
   */
  @Override
  public OptionalInt messagesPerEntry(int nodes) {
    if (nodes < 1) {
      return OptionalInt.empty();
    }
    int l = Math.min(LEADER_COUNT, nodes);
    return OptionalInt.of(nodes == 1 ? 0 : 11 * (l - 1) + 3);
  }

  @Override
  public String messagesPerEntryFormula() {
    return "11(L-1)+3";
  }

  /** {@inheritDoc} The writer mode and quiet period of the URL's {@code writerMode} and {@code quietPeriod}. */
  @Override
  public Claim writeClaim(String name, AlgorithmSettings settings) {
    if (settings instanceof BakerySettings s) {
      return Claim.write(name, s.writerMode(), s.writerMode() == Claim.Writer.TIMED_SOFT ? s.quietNanos() : 0);
    }
    throw new IllegalArgumentException("bakery needs BakerySettings, not " + settings);
  }

  @Override
  public String toString() {
    return name();
  }
}
