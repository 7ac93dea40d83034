package dev.tumbler.peer.buckets;

import dev.tumbler.lock.Capability;
import dev.tumbler.peer.algorithm.CoreContext;
import dev.tumbler.peer.election.ElectedAlgorithm;
import java.util.EnumSet;
import java.util.OptionalInt;

/**
 * The descriptor of {@code buckets} as a lock algorithm: seed 002's bucketed counters on one elected server, serving
 * semaphores and, as one-permit semaphores of their own, locks. Every native node runs the same core for its
 * semaphores whatever its lock algorithm ({@link dev.tumbler.peer.composite.Hosting}); with {@code algorithm=buckets}
 * it serves the locks too. Capabilities per NATIVE-ALGORITHMS §6.5. Immutable and thread safe.
 */
public final class BucketsAlgorithm extends ElectedAlgorithm<BucketsMessage, BucketsSettings> {

  /** The one instance. */
  public static final BucketsAlgorithm BUCKETS = new BucketsAlgorithm();

  /** The server is one node: {@code leaders[0]} of a view of one leader. */
  public static final int LEADER_COUNT = 1;

  private BucketsAlgorithm() {
    super(BucketsCore.ALGORITHM,
        "seed 002's bucketed counters on one elected server: semaphores, and locks as one-permit semaphores; "
            + "3 messages per entry; survives the loss of a minority of nodes",
        // FAIR: the server grants in arrival order, a request that does not fit holding back the ones behind it.
        // LEADER_ELECTION: the SPI's LockElection over a lock; the server tells every candidate who leads.
        EnumSet.of(Capability.MUTEX, Capability.SEMAPHORE, Capability.FENCING, Capability.LEASE_EXPIRY,
            Capability.LOST_NOTIFICATION, Capability.FAIR, Capability.LEADER_ELECTION, Capability.FAULT_TOLERANT),
        new BucketsCodec(), LEADER_COUNT,
        "every member exchanges heartbeats with the leader and restates to the server",
        BucketsSettings.class, BucketsSettings.PARAMETERS, BucketsSettings::from, BucketsSettings::simulation);
  }

  /**
   * {@inheritDoc}
   *
   * @throws IllegalArgumentException if the context gives no lease term: a semaphore's permits always have one
   */
  @Override
  public BucketsCore newCore(CoreContext context) {
    BucketsSettings s = settings(context.settings());
    return new BucketsCore(context.self(), context.peers(), context.leaseNanos(), context.peerTimeoutNanos(),
        s.election().leaderTimeoutNanos(), s.bucketSize(), true, context.random());
  }

  /** {@inheritDoc} Its elected server knows every node's grants. */
  @Override
  public boolean listsHeld() {
    return true;
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
}
