package dev.tumbler.peer.lease;

import dev.tumbler.lock.Capability;
import dev.tumbler.peer.algorithm.CoreContext;
import dev.tumbler.peer.election.ElectedAlgorithm;
import java.util.EnumSet;
import java.util.OptionalInt;

/**
 * The descriptor of {@code lease}: seed 001's lock service of leases on one elected server, with locks cached on
 * their nodes and recalled. Capabilities per NATIVE-ALGORITHMS §5.5. Immutable and thread safe.
 */
public final class LeaseAlgorithm extends ElectedAlgorithm<LeaseMessage, LeaseAlgorithmSettings> {

  /** The one instance. */
  public static final LeaseAlgorithm LEASE = new LeaseAlgorithm();

  /** The server is one node: {@code leaders[0]} of a view of one leader. */
  public static final int LEADER_COUNT = 1;

  private LeaseAlgorithm() {
    super(LeaseCore.ALGORITHM,
        "seed 001's lease server, elected, with locks cached on their nodes and recalled: 0 messages to take "
            + "again a lock this node released, 4 when it moves between nodes; survives the loss of a minority of nodes",
        // FAIR: the server grants in arrival order, a cached lock yields to a recall, and a node re-grants its cached
        // lock only while none of its requests waits at the server. LEADER_ELECTION: the SPI's LockElection over a
        // lock; the server tells every candidate who leads.
        EnumSet.of(Capability.MUTEX, Capability.FENCING, Capability.LEASE_EXPIRY, Capability.LOST_NOTIFICATION,
            Capability.FAIR, Capability.LEADER_ELECTION, Capability.FAULT_TOLERANT),
        new LeaseCodec(), LEADER_COUNT, "every member exchanges heartbeats with the leader and restates to the server",
        LeaseAlgorithmSettings.class, LeaseAlgorithmSettings.PARAMETERS, LeaseAlgorithmSettings::from,
        LeaseAlgorithmSettings::simulation);
  }

  /**
   * {@inheritDoc}
   *
   * @throws IllegalArgumentException if the context gives no lease term
   */
  @Override
  public LeaseCore newCore(CoreContext context) {
    LeaseAlgorithmSettings s = settings(context.settings());
    return new LeaseCore(context.self(), context.peers(), context.leaseNanos(), context.peerTimeoutNanos(),
        s.election().leaderTimeoutNanos(), s.recallIntervalNanos(), s.cache(), context.random());
  }

  /** {@inheritDoc} Its elected server knows every node's grants. */
  @Override
  public boolean listsHeld() {
    return true;
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
}
