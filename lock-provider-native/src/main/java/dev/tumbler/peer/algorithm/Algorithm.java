package dev.tumbler.peer.algorithm;

import dev.tumbler.lock.Capability;
import dev.tumbler.lock.spi.LockUrl;
import dev.tumbler.peer.core.Claim;
import dev.tumbler.peer.core.MessageCodec;
import dev.tumbler.peer.core.PeerMessage;
import dev.tumbler.peer.core.ProtocolCore;
import dev.tumbler.peer.election.ElectionSettings;
import java.util.OptionalInt;
import java.util.Set;

/**
 * One algorithm the native provider can run, described once: its URL name, what it keeps, how many nodes
 * it takes, its codec, its own URL parameters and how to make its core. The provider, the CLI and the
 * simulator take algorithms from {@link Algorithms} and never name a core class or compare names; a new
 * algorithm is one package with its descriptor plus one line in {@link Algorithms}. Implementations are
 * immutable and thread safe.
 *
 * @param <M> the algorithm's message type
 */
public interface Algorithm<M extends PeerMessage> {

  /** The name in URLs ({@code algorithm=…}) and on the command line: lower-case words joined by {@code -}. */
  String name();

  /** One line on what it is, for help texts and {@code tumbler providers}. */
  String summary();

  /**
   * What a service running it keeps for locks, as the TCK checks it. The provider adds what the node's
   * other cores keep (semaphores, transactions) to compute a service's capabilities.
   */
  Set<Capability> capabilities();

  /** The most members a cluster of it may have. */
  int maxNodes();

  /** Why a cluster may not have more than {@link #maxNodes()} members, for the error message. */
  String maxNodesReason();

  /** The binary codec of its messages. */
  MessageCodec<M> codec();

  /** Whether its grants have a term (so {@code leaseTime} and {@code renew} apply). */
  boolean leased();

  /** The URL parameters of its own, beyond the provider's common ones; empty for none (the default). */
  default Set<String> parameters() {
    return Set.of();
  }

  /**
   * Its settings read from {@code url}, every value checked; {@link AlgorithmSettings#NONE} (the default) for an
   * algorithm with no parameters of its own.
   *
   * @throws dev.tumbler.lock.InvalidLockUrlException naming the parameter that is wrong
   */
  default AlgorithmSettings settings(LockUrl url) {
    return AlgorithmSettings.NONE;
  }

  /** Its settings when the URL gives none: what the simulator runs ({@link AlgorithmSettings#NONE} by default). */
  default AlgorithmSettings defaults() {
    return AlgorithmSettings.NONE;
  }

  /**
   * Whether its nodes elect leaders (NATIVE-ALGORITHMS §2.4): then every node also runs an election core,
   * made with {@link #election(CoreContext)}, whose views reach the lock core as {@code Input.View}.
   */
  default boolean elected() {
    return false;
  }

  /**
   * Whether one node, {@code leaders[0]} of the view, serves everything ({@code lease}, {@code buckets}): then the
   * election replaces a view whose first leader is unreachable, even while other leaders of it are not.
   */
  default boolean singleServer() {
    return false;
  }

  /**
   * The election settings of the node {@code context} describes; called only when {@link #elected()}.
   *
   * @throws UnsupportedOperationException for an algorithm that elects no leaders
   */
  default ElectionSettings election(CoreContext context) {
    throw new UnsupportedOperationException(name() + " elects no leaders");
  }

  /**
   * The claim a write lock of this algorithm makes on {@code name} under {@code settings}: a hard writer,
   * unless the algorithm's settings choose another writer mode.
   */
  default Claim writeClaim(String name, AlgorithmSettings settings) {
    return Claim.write(name, Claim.Writer.HARD, 0);
  }

  /**
   * Whether its core can say who holds a name: it answers {@code Input.HolderQuery} with the holder's claim tag,
   * which the provider uses to tell an election's candidates who leads. A core that cannot answers at once that
   * it does not know, and the provider does not ask it.
   */
  default boolean answersHolderQueries() {
    return false;
  }

  /**
   * Whether its core can list what is held ({@code Input.ListQuery}) by the word of a server or leaders that know every
   * node's grants, or of a majority of the members that each know their share; the provider's {@code heldLocks()}
   * answers "cannot say" where it cannot.
   */
  default boolean listsHeld() {
    return false;
  }

  /** A core for one node, with empty state. */
  ProtocolCore<M> newCore(CoreContext context);

  /**
   * What one uncontended acquire and release costs in network messages on a fault-free cluster of
   * {@code nodes} members, averaged over the nodes a client may sit on; empty when it is not a constant.
   */
  OptionalInt messagesPerEntry(int nodes);

  /** {@link #messagesPerEntry} as a formula for tables ({@code 3(N-1)}); empty when there is none to show. */
  default String messagesPerEntryFormula() {
    return "";
  }
}
