package dev.tumbler.peer.buckets;

import dev.tumbler.peer.core.Claim;
import dev.tumbler.peer.core.Observation;
import dev.tumbler.peer.election.ElectedServer;
import java.util.List;
import java.util.random.RandomGenerator;

/**
 * The {@code buckets} core (seed 002, NATIVE-ALGORITHMS §6): counting semaphores whose counters sit on one elected
 * server, {@code leaders[0]} of the node's view, in buckets of a fixed size ({@link Buckets}). Every node runs it for
 * its clients; the node that leads also serves. Pure, like every core.
 *
 * <p>It is the {@link ElectedServer} machine (the view, the grace, restatements, waiting requests, the timer, and the
 * test-only mutations of those: no grace, giving a lost grant back with the loss) run with the rules of
 * {@code buckets}: its table on the server ({@link BucketsServer}), its sessions on every node ({@link BucketsClient}),
 * and its messages ({@link BucketsMessage}).
 *
 * <p><b>Server.</b> While this node is the view's server and its leader lease holds ({@code now < activeUntil}), it
 * grants requests in the order they came, each when its permits fit in its handle's buckets and no earlier request
 * of the name waits (no barging): {@code Grant} carries a token {@code term·2^37 + counter}, larger than every
 * token of earlier terms and of this one. Each client session has one lease on the server, renewed by
 * {@code SessionRenew}: a session not heard from for {@code T} loses every grant it holds (the seed's monitor).
 * Requests that wait are kept while their client asks again every third of the term. In a new server's grace (the
 * machine's) it takes the restated grants back, so that no grant of the previous server that a holder may still
 * trust is given to another.
 *
 * <p><b>Clients.</b> A request goes to the server (a call when this node is the server); a grant is trusted from the
 * moment the message it answers was sent, for {@code 3/4} of the term (the echo rule), and every grant of a session
 * lives as long as the session's lease, renewed when the client renews any of them. The node restates its sessions,
 * grants and waiting requests to every new server; how a request rides out a failover, and when it fails, is the
 * machine's.
 *
 * <p>Semaphore names and lock names are apart: with {@code locks} a {@link Claim.Mode#EXCLUSIVE} claim is one
 * permit of a one-permit semaphore of its own name space ({@code algorithm=buckets}).
 */
public final class BucketsCore extends ElectedServer<BucketsMessage, BucketsClient.Req> {

  /** The name of the lock algorithm that serves locks as one-permit semaphores. */
  public static final String ALGORITHM = "buckets";

  /** The prefix of a lock's name on the wire and in the server's table. */
  static final String LOCK_PREFIX = "L";
  /** The prefix of a semaphore's name on the wire and in the server's table. */
  static final String SEMAPHORE_PREFIX = "S";

  /** Test-only mutation: the server frees a session's permits as soon as the link to its node goes down. */
  boolean mutationFreeOnPeerDown;
  /** Test-only mutation: a session whose client went silent keeps its permits for ever. */
  boolean mutationNoSessionExpiry;
  /** Test-only mutation, handed to every name's {@link Buckets}: a release empties the lowest buckets first. */
  boolean mutationReleaseLowestFirst;
  /** Test-only mutation, handed to every name's {@link Buckets}: a bucket takes one permit more than its size. */
  boolean mutationCeilingOffByOne;

  /**
   * For checkers (the simulator): publish the counters of a name ({@link Observation.Buckets}) whenever they change.
   * Off by default: with small buckets a name may have thousands.
   */
  public boolean reportBuckets;

  private final BucketsServer server;
  private final BucketsClient client;

  /**
   * @param self this node's id
   * @param peers the other members
   * @param leaseNanos the term of a session's lease ({@code T})
   * @param peerTimeoutNanos how long the node may have fewer members connected than a quorum needs before its waits
   *     fail
   * @param leaderTimeoutNanos the election's leader timeout: a new server's grace is {@code T} plus it
   * @param bucketSize the permits of a bucket, the same on every node; 0 for buckets as large as each handle's
   *     {@code maxPermits} (one bucket a name, and handles of one name must then agree on it)
   * @param locks whether locks ({@link Claim.Mode#EXCLUSIVE} claims) are served too, as one-permit semaphores
   * @param random the source of this core's incarnation
   */
  public BucketsCore(String self, List<String> peers, long leaseNanos, long peerTimeoutNanos,
      long leaderTimeoutNanos, int bucketSize, boolean locks, RandomGenerator random) {
    super(ALGORITHM, BucketsMessage.ToServer.class, self, peers, leaseNanos, peerTimeoutNanos, leaderTimeoutNanos, 0,
        random);
    if (bucketSize < 0) {
      throw new IllegalArgumentException("bucketSize must be 0 (one bucket a handle) or positive: " + bucketSize);
    }
    server = new BucketsServer(this, bucketSize);
    client = new BucketsClient(this, server, bucketSize, locks);
    run(server, client);
  }

  /** The counters of {@code name} on this node's server, or null: for tests. */
  Buckets buckets(String name) {
    return server.buckets(SEMAPHORE_PREFIX + name);
  }
}
