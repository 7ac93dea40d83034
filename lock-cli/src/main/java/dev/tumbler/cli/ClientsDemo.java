package dev.tumbler.cli;

import dev.tumbler.lock.Lease;
import dev.tumbler.lock.LockException;
import dev.tumbler.lock.LockProviders;
import dev.tumbler.lock.LockService;
import dev.tumbler.peer.node.NodeStats;
import dev.tumbler.peer.provider.LoopbackCluster;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * {@code tumbler demo --clients}: three members over TCP on loopback that take thin clients (CLIENTS.md), and clients
 * that come and go: each worker opens a client, takes one lock, adds one to a counter inside it, and closes the client,
 * again and again. A third of the way in, the member that serves the most clients is killed; two thirds in, it comes
 * back (and joins a lease term later). The table shows, phase by phase, the clients opened, the increments, the
 * failures, how the clients' homes were spread over the members, and the times to connect and to acquire; the checks
 * are one holder at a time, fencing tokens that only grow, and a counter equal to the increments made.
 */
final class ClientsDemo {

  private static final String PARAMETERS = "&leaseTime=1s&electionDelay=100ms&leaderLease=200ms&peerTimeout=5s";
  private static final Duration AWAIT = Duration.ofSeconds(10);
  private static final String LOCK = "job";

  private ClientsDemo() {}

  /** A phase's counts, one slot each: 0 before the kill, 1 while the member is down, 2 after it came back. */
  private record Counts(AtomicLongArray opened, AtomicLongArray increments, AtomicLongArray failures,
      AtomicLongArray connectNanos, AtomicLongArray acquireNanos, AtomicLongArray[] homes) {
    static Counts of(int members) {
      AtomicLongArray[] homes = new AtomicLongArray[3];
      for (int i = 0; i < 3; i++) {
        homes[i] = new AtomicLongArray(members);
      }
      return new Counts(new AtomicLongArray(3), new AtomicLongArray(3), new AtomicLongArray(3), new AtomicLongArray(3),
          new AtomicLongArray(3), homes);
    }
  }

  static int run(String algorithm, Duration duration, int workers, PrintWriter out, PrintWriter err) throws Exception {
    int members = 3;
    err.println("clients demo (" + algorithm + "): 3 members over TCP on loopback that take thin clients; "
        + workers + " workers open a client, take a lock, add one and close it, again and again ...");
    err.println("  (a member that takes clients joins a lease term after it starts: about a second here)");
    err.flush();
    Counts counts = Counts.of(members);
    AtomicInteger phase = new AtomicInteger();
    AtomicInteger occupancy = new AtomicInteger();
    AtomicInteger overlaps = new AtomicInteger();
    AtomicLong counter = new AtomicLong();
    AtomicLong lastToken = new AtomicLong(Long.MIN_VALUE);
    AtomicInteger staleTokens = new AtomicInteger();
    ConcurrentLinkedQueue<String> errors = new ConcurrentLinkedQueue<>();
    String killed;
    int victim;
    long sessionsAtKill;
    try (LoopbackCluster cluster = LoopbackCluster.open(algorithm, members, PARAMETERS, true)) {
      List<String> addresses = cluster.clientAddresses();
      long end = System.nanoTime() + duration.toNanos();
      List<Thread> threads = new ArrayList<>();
      for (int w = 0; w < workers; w++) {
        int first = w;
        threads.add(Thread.ofVirtual().name("demo-client-" + w).start(() -> {
          while (System.nanoTime() - end < 0) {
            int p = phase.get();
            long t0 = System.nanoTime();
            try (LockService client = LockProviders.connect(cluster.clientUrl(first), cluster.clientProperties())) {
              counts.opened().incrementAndGet(p);
              counts.connectNanos().addAndGet(p, System.nanoTime() - t0);
              client.unwrap(NodeStats.class).home().ifPresent(h -> counts.homes()[p].incrementAndGet(
                  addresses.indexOf(h)));
              long t1 = System.nanoTime();
              Optional<Lease> l = client.lock(LOCK).tryAcquire(AWAIT);
              if (l.isEmpty()) {
                counts.failures().incrementAndGet(p);
                continue;
              }
              counts.acquireNanos().addAndGet(p, System.nanoTime() - t1);
              try (Lease lease = l.get()) {
                if (occupancy.incrementAndGet() != 1) {
                  overlaps.incrementAndGet();
                }
                long token = lease.fencingToken();
                if (lastToken.getAndAccumulate(token, Math::max) >= token) {
                  staleTokens.incrementAndGet();
                }
                counter.incrementAndGet();
                counts.increments().incrementAndGet(p);
                Thread.sleep(5);
                occupancy.decrementAndGet();
              }
            } catch (LockException e) {
              counts.failures().incrementAndGet(p); // a client whose home was killed under it, say: told, not hidden
              if (errors.size() < 5) {
                errors.add(e.getClass().getSimpleName() + ": " + e.getMessage());
              }
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
              return;
            }
          }
        }));
      }
      long third = duration.toNanos() / 3;
      Thread.sleep(Duration.ofNanos(third));
      victim = busiest(cluster);
      sessionsAtKill = cluster.services().get(victim).unwrap(NodeStats.class).clientSessions();
      killed = addresses.get(victim);
      err.println("  killing member " + (victim + 1) + " (clients at " + killed + "), which serves " + sessionsAtKill
          + " client session(s)");
      err.flush();
      phase.set(1);
      cluster.crash(victim);
      Thread.sleep(Duration.ofNanos(third));
      err.println("  starting member " + (victim + 1) + " again");
      err.flush();
      phase.set(2);
      cluster.restart(victim);
      for (Thread t : threads) {
        t.join(AWAIT.plusSeconds(20).toMillis());
      }
    }
    List<String[]> rows = new ArrayList<>();
    rows.add(new String[] {"phase", "clients opened", "increments", "failures", "homes (member 1/2/3)",
        "mean connect", "mean acquire"});
    String[] names = {"all members up", "member " + (victim + 1) + " killed", "member " + (victim + 1) + " back"};
    long increments = 0;
    for (int p = 0; p < 3; p++) {
      long opened = counts.opened().get(p);
      long n = counts.increments().get(p);
      increments += n;
      AtomicLongArray h = counts.homes()[p];
      rows.add(new String[] {names[p], Long.toString(opened), Long.toString(n), Long.toString(counts.failures().get(p)),
          h.get(0) + "/" + h.get(1) + "/" + h.get(2), millis(counts.connectNanos().get(p), opened),
          millis(counts.acquireNanos().get(p), n)});
    }
    out.println();
    out.println("tumbler demo --clients: 3 " + algorithm + " members over TCP on loopback, each with a client listener;"
        + " " + workers + " workers, each opening a thin client per entry; member " + (victim + 1) + " (serving "
        + sessionsAtKill + " session(s)) killed for the middle third of " + duration.toMillis() + " ms");
    out.println();
    out.print(TextTable.render(rows, "  ", true));
    boolean killedPhaseGranted = counts.increments().get(1) > 0;
    boolean exact = counter.get() == increments;
    boolean passed = overlaps.get() == 0 && staleTokens.get() == 0 && exact && killedPhaseGranted
        && counts.increments().get(2) > 0;
    out.println();
    out.println("checks: one holder at a time: " + (overlaps.get() == 0 ? "yes" : "NO, " + overlaps.get() + " overlaps")
        + "; fencing tokens only grow: " + (staleTokens.get() == 0 ? "yes" : "NO, " + staleTokens.get() + " stale")
        + "; counter " + counter.get() + " = increments " + increments + ": " + (exact ? "yes" : "NO")
        + "; granted while a member was down: " + (killedPhaseGranted ? "yes" : "NO"));
    if (!errors.isEmpty()) {
      out.println("failures seen (a client whose home was killed is told, and the next one goes elsewhere):");
      for (String e : errors) {
        out.println("  " + e);
      }
    }
    out.flush();
    return passed ? ExitCodes.OK : ExitCodes.CHECK_FAILED;
  }

  /** The member that serves the most thin-client sessions now (the first among equals). */
  private static int busiest(LoopbackCluster cluster) {
    List<LockService> services = cluster.services();
    int best = 0;
    long most = -1;
    for (int i = 0; i < services.size(); i++) {
      long n = services.get(i).unwrap(NodeStats.class).clientSessions();
      if (n > most) {
        most = n;
        best = i;
      }
    }
    return best;
  }

  private static String millis(long totalNanos, long count) {
    return count == 0 ? "-" : String.format("%.1f ms", totalNanos / 1e6 / count);
  }
}
