package dev.tumbler.peer.bakery;

import dev.tumbler.lock.Capability;
import dev.tumbler.peer.algorithm.AlgorithmSettings;
import dev.tumbler.peer.algorithm.CoreContext;
import dev.tumbler.peer.core.Claim;
import dev.tumbler.peer.election.ElectedAlgorithm;
import dev.tumbler.peer.election.ElectionParameters;
import java.util.EnumSet;
import java.util.OptionalInt;

/**
 * The descriptor of {@code bakery}: snaplock's quorum bakery among three elected leaders. Grants have a term
 * ({@code leaseTime}), so every node also runs the election core; one of the three leaders may be lost at any
 * time without a pause. Capabilities per NATIVE-ALGORITHMS §3.5. Immutable and thread safe.
 */
public final class BakeryAlgorithm extends ElectedAlgorithm<BakeryMessage, BakerySettings> {

  /** The one instance. */
  public static final BakeryAlgorithm BAKERY = new BakeryAlgorithm();

  /** Leaders per view (seed 003: three). */
  public static final int LEADER_COUNT = 3;

  private BakeryAlgorithm() {
    super(BakeryCore.ALGORITHM,
        "snaplock's quorum bakery among three elected leaders, 11(L-1)+3 messages per entry; survives the loss "
            + "of one leader (experimental)",
        // READ_WRITE: read claims share, write claims (hard, soft, timed-soft) exclude, by the activation rule.
        // LEADER_ELECTION: an election is the SPI's LockElection over an exclusive claim tagged with the candidate
        // id, and a candidate that does not lead learns who does from its owner leader's table: the leader that
        // would own the asking node's requests on the name answers with the tag of the active ticket with the
        // largest key in its table (tickets carry their claim's tag to every leader and over a hand-over).
        EnumSet.of(Capability.MUTEX, Capability.READ_WRITE, Capability.FENCING, Capability.LEASE_EXPIRY,
            Capability.LOST_NOTIFICATION, Capability.FAIR, Capability.LEADER_ELECTION, Capability.FAULT_TOLERANT),
        new BakeryCodec(), LEADER_COUNT,
        // the token layout (term·2^34 + H·2^2 + ownerSlot) bounds the leaders by its 2-bit slot, not the members
        "every member exchanges heartbeats and restatements with the leaders (fencing tokens bound only the "
            + "three leaders, by a 2-bit owner slot)",
        BakerySettings.class, BakerySettings.PARAMETERS, BakerySettings::from, BakerySettings::simulation);
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
    BakerySettings s = settings(context.settings());
    return new BakeryCore(context.self(), context.peers(), context.leaseNanos(), context.peerTimeoutNanos(),
        s.leaderTimeoutNanos(), context.random());
  }

  /**
   * {@inheritDoc} §3.6: {@code 11(L−1) + 3c} with {@code L = min(3, nodes)} leaders and {@code c} = 0 on the
   * name's owner leader and 1 elsewhere. Averaged over the nodes a client may sit on, the owner being one node
   * in {@code nodes}, that is not an integer for {@code nodes > 1}; the figure returned is the one for a client
   * that is not the owner leader ({@code 11(L−1) + 3}), which every node but one pays.
   */
  /** {@inheritDoc} A majority of its leaders knows every grant: a listing merges their tables. */
  @Override
  public boolean listsHeld() {
    return true;
  }

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
    BakerySettings s = settings(settings);
    return Claim.write(name, s.writerMode(), s.writerMode() == Claim.Writer.TIMED_SOFT ? s.quietNanos() : 0);
  }
}
