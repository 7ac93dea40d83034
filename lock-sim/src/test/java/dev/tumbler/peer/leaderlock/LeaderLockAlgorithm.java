package dev.tumbler.peer.leaderlock;

import dev.tumbler.lock.Capability;
import dev.tumbler.lock.spi.LockUrl;
import dev.tumbler.peer.algorithm.Algorithm;
import dev.tumbler.peer.algorithm.AlgorithmSettings;
import dev.tumbler.peer.algorithm.CoreContext;
import dev.tumbler.peer.core.MessageCodec;
import dev.tumbler.peer.election.ElectionSettings;
import java.util.EnumSet;
import java.util.OptionalInt;
import java.util.Set;

/**
 * The descriptor of {@link LeaderLockCore}, a test-only algorithm (not in the registry): elected (one
 * leader, the server, with the simulation timings of Appendix A) and leased.
 */
final class LeaderLockAlgorithm implements Algorithm<LeaderLockMessage> {

  static final LeaderLockAlgorithm INSTANCE = new LeaderLockAlgorithm();

  private static final long MS = 1_000_000L;

  /** Appendix A's simulation timings: electionDelay 20 ms, leaderLease 30 ms, heartbeat 8 ms, leaderTimeout 45 ms. */
  static final ElectionSettings ELECTION = new ElectionSettings(1, ElectionSettings.DEFAULT_PRIORITY, 20 * MS, 30 * MS,
      8 * MS, 45 * MS, 0);

  private static final LeaderLockCodec CODEC = new LeaderLockCodec();

  private LeaderLockAlgorithm() {}

  @Override
  public String name() {
    return LeaderLockCore.ALGORITHM;
  }

  @Override
  public String summary() {
    return "test only: one elected server grants leased locks and read/write locks by the echo rule";
  }

  @Override
  public Set<Capability> capabilities() {
    return Set.copyOf(EnumSet.of(Capability.MUTEX, Capability.READ_WRITE, Capability.FENCING,
        Capability.LEASE_EXPIRY, Capability.LOST_NOTIFICATION));
  }

  @Override
  public int maxNodes() {
    return 16;
  }

  @Override
  public String maxNodesReason() {
    return "the election's views hold at most 16 leaders";
  }

  @Override
  public MessageCodec<LeaderLockMessage> codec() {
    return CODEC;
  }

  @Override
  public boolean leased() {
    return true;
  }

  @Override
  public Set<String> parameters() {
    return Set.of();
  }

  @Override
  public AlgorithmSettings settings(LockUrl url) {
    return AlgorithmSettings.NONE;
  }

  @Override
  public AlgorithmSettings defaults() {
    return AlgorithmSettings.NONE;
  }

  @Override
  public boolean elected() {
    return true;
  }

  @Override
  public ElectionSettings election(CoreContext context) {
    return ELECTION;
  }

  @Override
  public LeaderLockCore newCore(CoreContext context) {
    return new LeaderLockCore(context.self(), context.peers(), context.leaseNanos(), context.peerTimeoutNanos(),
        ELECTION.leaderTimeoutNanos(), context.random());
  }

  @Override
  public OptionalInt messagesPerEntry(int nodes) {
    return OptionalInt.empty(); // 3 for a client on another node than the server, 0 on the server's
  }

  @Override
  public String toString() {
    return name();
  }
}
