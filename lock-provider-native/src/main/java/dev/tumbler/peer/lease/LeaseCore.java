package dev.tumbler.peer.lease;

import dev.tumbler.peer.election.ElectedServer;
import java.util.List;
import java.util.concurrent.atomic.LongAdder;
import java.util.random.RandomGenerator;

/**
 * The {@code lease} core (seed 001, NATIVE-ALGORITHMS §5): a lock service of leases on one elected server,
 * {@code leaders[0]} of the node's view, with locks cached on the client nodes and recalled. Every node runs it for
 * its clients; the node that leads also serves. Pure, like every core.
 *
 * <p>It is the {@link ElectedServer} machine (the view, the grace, restatements, waiting requests, the timer, and the
 * test-only mutations of those: no grace, serving without the leader lease, giving a lost lease back with the loss)
 * run with the rules of {@code lease}: its table on the server ({@link LeaseServer}), its helpers on every node
 * ({@link LeaseClient}), and its messages ({@link LeaseMessage}).
 *
 * <p><b>Server.</b> While this node is the view's server and its leader lease holds, it grants a free lock to the
 * first request that waits for it, as a lease of term {@code T} with a token {@code term·2^37 + counter·2^13}, larger
 * than every token of earlier terms and of this one. Requests for a held lock wait in arrival order, and the holder
 * is recalled, again every {@code recallInterval} while any waits (001:24). A lease not renewed for {@code T} ends
 * (001:22). A cached lease whose renewal comes while someone waits is not renewed: the waiter gets the lock (001:16).
 * In a new server's grace (S-8, the machine's) it takes the restated leases back, with their tokens.
 *
 * <p><b>Clients.</b> A node has at most one lease a name, shared by its sessions. A request goes to the server (a
 * call when this node is the server); a grant is trusted from the moment the message it answers was sent, for
 * {@code 3/4} of the term (the echo rule). When the request that holds the lease releases it, the node keeps it,
 * cached (001:16), renewing it itself every half term as inactive; a later request of the node takes it at once,
 * with no message, under the token of its grant plus one more each time (C-1). A recall gives a cached lease back
 * at once, and an active one when its request releases it (C-7, C-4). The node restates its leases and waiting
 * requests to every new server; how a request rides out a failover, and when it fails, is the machine's.
 */
public final class LeaseCore extends ElectedServer<LeaseMessage, LeaseClient.Req> {

  /** The name of the algorithm. */
  public static final String ALGORITHM = "lease";

  /** A token's low bits: the local re-grants of a cached lease. */
  static final int LOCAL_BITS = 13;
  /** The local re-grants of one lease; at this many the lease goes back and the node asks anew (C-1). */
  static final int MAX_LOCAL = (1 << LOCAL_BITS) - 1;

  /**
   * Test-only mutation: the client trusts a grant or renewal for a whole term from when it receives it, not for
   * {@code 3T/4} from when it sent what it answers (the naive reading of 001:44, with the margin dropped): a holder cut
   * off trusts its lease past the server's term.
   */
  boolean mutationTrustFromReceipt;
  /** Test-only mutation: the server gives the lock to the waiter as soon as it recalls it, without the reply. */
  boolean mutationGrantOnRecall;
  /** Test-only mutation: a cached lease is granted locally while its inactive renewal is in flight. */
  boolean mutationLocalGrantDuringInactiveRenew;

  /** For checkers (the simulator): counts the grants of every core it is given to, from a cache and from a server. */
  public LongAdder[] grantCounts;

  private final LeaseServer server;
  private final LeaseClient client;

  /**
   * @param self this node's id
   * @param peers the other members
   * @param leaseNanos the term of a lease ({@code T})
   * @param peerTimeoutNanos how long the node may have fewer members connected than a quorum needs before its waits
   *     fail
   * @param leaderTimeoutNanos the election's leader timeout: a new server's grace is {@code T} plus it
   * @param recallIntervalNanos how often a holder is recalled while someone waits
   * @param cache whether a released lock stays on its node (else it goes back to the server at once)
   * @param random the source of this core's incarnation
   */
  public LeaseCore(String self, List<String> peers, long leaseNanos, long peerTimeoutNanos, long leaderTimeoutNanos,
      long recallIntervalNanos, boolean cache, RandomGenerator random) {
    super(ALGORITHM, LeaseMessage.ToServer.class, self, peers, leaseNanos, peerTimeoutNanos, leaderTimeoutNanos,
        LOCAL_BITS, random);
    if (recallIntervalNanos <= 0) {
      throw new IllegalArgumentException("recallInterval must be positive: " + recallIntervalNanos);
    }
    server = new LeaseServer(this, recallIntervalNanos);
    client = new LeaseClient(this, cache);
    run(server, client);
  }

  /** Grants this node's clients took from a cached lease, with no message (for statistics and the simulator). */
  public long localGrants() {
    return client.localGrants();
  }

  /** Whether the server side of this node lists {@code node} as the holder of {@code name}, and whether active. */
  Boolean holderActive(String name, String node) {
    return server.holderActive(name, node);
  }
}
