package dev.tumbler.peer.sim;

import dev.tumbler.peer.core.Claim;
import java.util.List;
import java.util.SplittableRandom;

/**
 * What the clients of a {@link Simulation} ask for (NATIVE-ALGORITHMS §2.10): the claims of their acquires,
 * how long they hold, whether they renew, and what the end-of-run probes ask for.
 */
public enum Workload {

  /**
   * Plain locks: exclusive claims, holds of 1–40 ms, every holder renews (the runs of the Lamport family
   * are exactly those of before workloads existed).
   */
  MUTEX {
    @Override
    Claim claim(SplittableRandom r, String name) {
      return Claim.exclusive(name);
    }

    @Override
    long hold(SplittableRandom r, long leaseNanos) {
      return (1 + r.nextInt(40)) * MS;
    }

    @Override
    boolean renews(SplittableRandom r) {
      return true;
    }

    @Override
    Claim probe(String name) {
      return Claim.exclusive(name);
    }
  },

  /**
   * Read/write locks: half the claims read, the others write as hard, soft or timed-soft writers (a quiet
   * period of 1–20 ms), and a few plain exclusive claims; holds of 1–40 ms, and one in four from a quarter
   * to three lease terms (so that leased grants are renewed, or lost); one holder in eight never renews.
   * Attempts and timeouts as the config says. The probes write.
   */
  READ_WRITE {
    @Override
    Claim claim(SplittableRandom r, String name) {
      int dice = r.nextInt(20);
      if (dice < 10) {
        return Claim.read(name);
      } else if (dice < 14) {
        return Claim.write(name, Claim.Writer.HARD, 0);
      } else if (dice < 17) {
        return Claim.write(name, Claim.Writer.SOFT, 0);
      } else if (dice < 19) {
        return Claim.write(name, Claim.Writer.TIMED_SOFT, (1 + r.nextInt(20)) * MS);
      }
      return Claim.exclusive(name);
    }

    @Override
    long hold(SplittableRandom r, long leaseNanos) {
      if (r.nextInt(4) > 0) {
        return (1 + r.nextInt(40)) * MS;
      }
      long term = leaseNanos > 0 ? leaseNanos : 120 * MS;
      return term / 4 + r.nextLong(term * 11 / 4);
    }

    @Override
    boolean renews(SplittableRandom r) {
      return r.nextInt(8) > 0;
    }

    @Override
    Claim probe(String name) {
      return Claim.write(name, Claim.Writer.HARD, 0);
    }
  },

  /**
   * Leases (NATIVE-ALGORITHMS §5): exclusive claims with holds as {@link #READ_WRITE}'s (one in four from a quarter to
   * three lease terms, renewed or lost; one holder in eight never renews), and one acquire in two on the node that
   * asked for the name last, so that released locks are taken again from a node's cache as often as they are
   * recalled to another node. The probes are exclusive.
   */
  LEASE {
    @Override
    Claim claim(SplittableRandom r, String name) {
      return Claim.exclusive(name);
    }

    @Override
    long hold(SplittableRandom r, long leaseNanos) {
      return READ_WRITE.hold(r, leaseNanos);
    }

    @Override
    boolean renews(SplittableRandom r) {
      return READ_WRITE.renews(r);
    }

    @Override
    Claim probe(String name) {
      return Claim.exclusive(name);
    }

    @Override
    boolean sticky() {
      return true;
    }
  },

  /**
   * Transactions (NATIVE-ALGORITHMS §4): one to three claims each, on paths of a small tree (a root {@code Lk} or a
   * child {@code [Lk, a]}, {@code [Lk, b]}), read or write, now and then a read upgraded to a write, asked 0–20 ms
   * apart, so that transactions wait for each other across the hierarchy and in cycles; holds of 1–40 ms; one
   * transaction in three aborts when chosen to break a deadlock. One op in four is a plain lock (exclusive or read)
   * on a root among them. The probes are plain locks on the roots, which conflict with every path below them.
   */
  TRANSACTIONS {
    @Override
    Claim claim(SplittableRandom r, String name) {
      List<String> path = r.nextInt(3) == 0 ? List.of(name) : List.of(name, r.nextBoolean() ? "a" : "b");
      return Claim.tx(path, r.nextBoolean() ? Claim.Mode.READ : Claim.Mode.WRITE);
    }

    @Override
    long hold(SplittableRandom r, long leaseNanos) {
      return (1 + r.nextInt(40)) * MS;
    }

    @Override
    boolean renews(SplittableRandom r) {
      return r.nextInt(16) > 0;
    }

    @Override
    Claim probe(String name) {
      return Claim.exclusive(name);
    }
  },

  /**
   * {@link #TRANSACTIONS} whose claims are all on one lock server, node 0's (the plain locks among them are on every
   * node, as there): a claim there is told on that server's word alone, with no stamp round and no other server
   * whose entries hold it back, so what an agent believes of that server's queue decides its grants.
   */
  TRANSACTIONS_ONE_SERVER {
    @Override
    Claim claim(SplittableRandom r, String name) {
      return TRANSACTIONS.claim(r, name);
    }

    @Override
    long hold(SplittableRandom r, long leaseNanos) {
      return TRANSACTIONS.hold(r, leaseNanos);
    }

    @Override
    boolean renews(SplittableRandom r) {
      return TRANSACTIONS.renews(r);
    }

    @Override
    Claim probe(String name) {
      return TRANSACTIONS.probe(name);
    }
  },

  /**
   * Semaphores (NATIVE-ALGORITHMS §6) with no bucket size: each name's handles agree on its limit (1 to 3 permits by
   * the name), and a request asks for 1 to all of them; holds as {@link #READ_WRITE}'s, one holder in eight never
   * renews. The probes take one permit.
   */
  SEMAPHORE {
    @Override
    Claim claim(SplittableRandom r, String name) {
      int limit = agreedLimit(name);
      return Claim.permits(name, 1 + r.nextInt(limit), limit);
    }

    @Override
    long hold(SplittableRandom r, long leaseNanos) {
      return READ_WRITE.hold(r, leaseNanos);
    }

    @Override
    boolean renews(SplittableRandom r) {
      return READ_WRITE.renews(r);
    }

    @Override
    Claim probe(String name) {
      return Claim.permits(name, 1, agreedLimit(name));
    }
  },

  /**
   * Semaphores in buckets of {@value #BUCKET_SIZE} for a varying number of resources (seed 002): the handles of one
   * name disagree on their limit (2, 4 or 6 permits: one to three buckets), and a request asks for 1 to all of its
   * handle's; holds as {@link #SEMAPHORE}'s. The probes take one permit with the largest limit.
   */
  SEMAPHORE_BUCKETS {
    @Override
    Claim claim(SplittableRandom r, String name) {
      int limit = BUCKET_SIZE * (1 + r.nextInt(3));
      return Claim.permits(name, 1 + r.nextInt(limit), limit);
    }

    @Override
    long hold(SplittableRandom r, long leaseNanos) {
      return READ_WRITE.hold(r, leaseNanos);
    }

    @Override
    boolean renews(SplittableRandom r) {
      return READ_WRITE.renews(r);
    }

    @Override
    Claim probe(String name) {
      return Claim.permits(name, 1, 3 * BUCKET_SIZE);
    }

    @Override
    public int bucketSize() {
      return BUCKET_SIZE;
    }
  };

  private static final long MS = 1_000_000L;

  /** The bucket size of {@link #SEMAPHORE_BUCKETS}. */
  static final int BUCKET_SIZE = 2;

  /** The limit every handle of {@code name} agrees on in {@link #SEMAPHORE}: 1 to 3, by the name. */
  static int agreedLimit(String name) {
    return 1 + Math.floorMod(name.hashCode(), 3);
  }

  /** The bucket size the nodes of its runs are configured with: 0 (none) but for {@link #SEMAPHORE_BUCKETS}. */
  public int bucketSize() {
    return 0;
  }

  /** Whether its clients ask for semaphore permits. */
  public boolean semaphores() {
    return this == SEMAPHORE || this == SEMAPHORE_BUCKETS;
  }

  /** Whether one acquire in two is on the node that asked for the same name last (a cache's locality). */
  boolean sticky() {
    return false;
  }

  /** Whether its clients begin transactions ({@link Op.Transaction}) rather than acquire one claim each. */
  boolean transactions() {
    return this == TRANSACTIONS || this == TRANSACTIONS_ONE_SERVER;
  }

  /** The claim of one acquire on {@code name}. */
  abstract Claim claim(SplittableRandom r, String name);

  /** How long a granted claim is held (by the holder's intent: a leased grant may be lost before). */
  abstract long hold(SplittableRandom r, long leaseNanos);

  /** Whether the holder renews (a leased grant of a holder that does not is lost once its window closes). */
  abstract boolean renews(SplittableRandom r);

  /** What the end-of-run probe of {@code name} asks for: a claim that excludes every other. */
  abstract Claim probe(String name);
}
