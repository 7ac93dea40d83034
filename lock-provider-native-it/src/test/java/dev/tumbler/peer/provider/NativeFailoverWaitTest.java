package dev.tumbler.peer.provider;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.tumbler.lock.Lease;
import dev.tumbler.lock.LockProviders;
import dev.tumbler.lock.LockService;
import dev.tumbler.lock.ServiceClosedException;
import dev.tumbler.lock.ServiceUnavailableException;
import dev.tumbler.lock.spi.AbstractLockService;
import dev.tumbler.lock.tck.LoopbackPorts;
import dev.tumbler.lock.tck.TcpProxy;
import dev.tumbler.peer.core.Observation;
import dev.tumbler.peer.transport.Transport;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Native waits ride out a failover (issue 40, item 11), over TCP: a wait ends with {@link ServiceUnavailableException}
 * only at its {@code maxWait}, or once its node has had fewer members connected than a quorum needs for
 * {@code peerTimeout}; {@code acquire()} waits for the election. The peer timeout here (1 s) is shorter than the
 * failovers and elections the waits must ride out, as 10 s is shorter than a default failover (3 + 10 + T + 3 s).
 */
@Timeout(600)
class NativeFailoverWaitTest {

  private static final Duration PEER_TIMEOUT = Duration.ofSeconds(1);
  /** Long waits: far longer than any failover here, so that they must end granted. */
  private static final Duration LONG = Duration.ofSeconds(90);
  private static final String CLIENT_SECRET = "failover-client-secret-0123456789";
  /** How long a member JVM of its own may take to start and join, on a busy two-core machine. */
  private static final Duration PROCESS_START = Duration.ofSeconds(120);

  private final ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor();

  @AfterEach
  void stopThreads() {
    threads.shutdownNow();
  }

  /**
   * (a) {@code lease}: the server member, a JVM of its own, is killed (SIGKILL) while waiters on the other members
   * and a thin client (whose home it was) wait for a lock and a semaphore it served. The failover (a leader timeout,
   * an election delay of 1.5 s, the new server's grace of a term and a leader timeout) lasts several peer timeouts:
   * the long waits are granted after it, a wait of 2 s ends at its maxWait (empty or unavailable), never before.
   */
  @Test
  void leaseWaitsRideOutTheKilledServerAndShortWaitsEndAtTheirMaxWait(@TempDir Path dir) throws Exception {
    List<String> ids = ports(3);
    List<String> listen = ports(3);
    String common = "&algorithm=lease&leaseTime=3000ms&leaderLease=300ms&electionDelay=1500ms&peerTimeout="
        + PEER_TIMEOUT.toMillis() + "ms&idleTimeout=2s&backoffMin=50ms&backoffMax=500ms&secret=" + NativeTargets.SECRET
        + "&clientSecret=" + CLIENT_SECRET;
    List<String> urls = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      List<String> peers = new ArrayList<>(ids);
      peers.remove(i);
      // the member of its own JVM sorts first in every election: it is the server
      urls.add("lock:native://" + ids.get(i) + "?peers=" + String.join(",", peers) + common + "&clientListen="
          + listen.get(i) + (i == 0 ? "&priority=1" : ""));
    }
    Path log = dir.resolve("member.log");
    Process server = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "-cp", System.getProperty("java.class.path"), MemberProcess.class.getName(), urls.get(0))
        .redirectErrorStream(true).redirectOutput(log.toFile()).redirectInput(ProcessBuilder.Redirect.PIPE).start();
    List<LockService> open = new ArrayList<>();
    List<TcpProxy> proxies = new ArrayList<>();
    try {
      // members that take clients join a lease term after they start: both at once
      Future<LockService> f1 = threads.submit(() -> LockProviders.connect(urls.get(1)));
      Future<LockService> f2 = threads.submit(() -> LockProviders.connect(urls.get(2)));
      LockService s1 = f1.get(60, TimeUnit.SECONDS);
      open.add(s1);
      LockService s2 = f2.get(60, TimeUnit.SECONDS);
      open.add(s2);
      awaitServer(s1, ids.get(0), server, log);
      awaitServer(s2, ids.get(0), server, log);
      // the thin client reaches the other members through proxies that pass nothing until it made its home on the
      // server's member, so that the kill makes it fail over too
      for (int i = 1; i < 3; i++) {
        String target = listen.get(i);
        TcpProxy p = TcpProxy.start("127.0.0.1", Integer.parseInt(target.substring(target.lastIndexOf(':') + 1)));
        proxies.add(p);
        p.blackhole();
      }
      LockService client = LockProviders.connect("lock:native://" + listen.get(0) + "," + proxies.get(0).address()
          + "," + proxies.get(1).address() + "?algorithm=lease&leaseTime=3000ms&peerTimeout=" + PEER_TIMEOUT.toMillis()
          + "ms&idleTimeout=2s&backoffMin=50ms&backoffMax=500ms&clientSecret=" + CLIENT_SECRET);
      open.add(client);
      assertEquals(Optional.of(listen.get(0)), NativeNodes.of(client).home(), "the client's home is the server");
      for (TcpProxy p : proxies) {
        p.heal();
      }
      Transport ct = NativeNodes.of(client).transport();
      long linked = System.nanoTime() + NativeTargets.LINK_WAIT.toNanos();
      while (ct.peers().stream().anyMatch(m -> !ct.isUp(m))) {
        assertTrue(System.nanoTime() < linked, "the client's links did not all come up");
        Thread.sleep(20);
      }

      Lease held = s1.lock("x").tryAcquire(Duration.ofSeconds(10)).orElseThrow();
      Lease permit = s1.semaphore("p", 1).tryAcquire(1, Duration.ofSeconds(10)).orElseThrow();
      List<Future<Outcome>> waits = List.of(
          wait(() -> s2.lock("x").tryAcquire(LONG)),
          wait(() -> client.lock("x").tryAcquire(LONG)),
          wait(() -> s2.semaphore("p", 1).tryAcquire(1, LONG)));
      Thread.sleep(500); // queued at the server
      for (Future<Outcome> w : waits) {
        assertFalse(w.isDone(), "a wait ended before the kill: " + (w.isDone() ? w.get() : ""));
      }

      server.destroyForcibly().waitFor();
      long killed = System.nanoTime();
      Duration shortWait = Duration.ofSeconds(2);
      Future<Outcome> shortOne = wait(() -> s2.lock("x").tryAcquire(shortWait));
      // three peer timeouts without a server: every wait is still going on
      Thread.sleep(3 * PEER_TIMEOUT.toMillis());
      for (Future<Outcome> w : waits) {
        if (w.isDone()) {
          fail("a wait of " + LONG.toSeconds() + " s ended " + w.get().at(killed) + " ms after the server was killed, "
              + "during the failover: " + w.get());
        }
      }
      Outcome s = shortOne.get(30, TimeUnit.SECONDS);
      assertFalse(s.granted(), "the short wait was granted during the grace: " + s);
      assertTrue(s.error() == null || s.error() instanceof ServiceUnavailableException, "the short wait: " + s);
      // never before its maxWait; by maxWait plus the API's answer grace (and a moment for this thread to run)
      assertTrue(s.elapsedMillis() >= shortWait.toMillis(), "the short wait ended before its maxWait: " + s);
      assertTrue(s.elapsedMillis() <= shortWait.toMillis() + AbstractLockService.ANSWER_GRACE_MILLIS + 1_000,
          "the short wait ended late: " + s);

      held.release(); // given back, or lost in the failover already: either way the waiters come next
      permit.release();
      for (Future<Outcome> w : waits) {
        Outcome o = w.get(LONG.toSeconds() + 10, TimeUnit.SECONDS);
        assertTrue(o.granted(), "a long wait did not ride out the failover: " + o);
      }
    } finally {
      server.destroyForcibly();
      for (LockService s : open) {
        s.close();
      }
      proxies.forEach(TcpProxy::close);
    }
  }

  /**
   * (b) {@code bakery}: on a 5-member cluster whose fifth member starts late, the first {@code acquire()} (no
   * deadline) and a long wait wait for the first election, which needs every member once, and are granted; a wait
   * whose service is closed meanwhile ends with {@link ServiceClosedException}.
   */
  @Test
  void bakeryFirstAcquireWaitsForTheFirstElection() throws Exception {
    List<String> ids = ports(5);
    List<String> urls = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      List<String> peers = new ArrayList<>(ids);
      peers.remove(i);
      urls.add("lock:native://" + ids.get(i) + "?peers=" + String.join(",", peers) + "&algorithm=bakery"
          + "&leaseTime=4000ms&leaderLease=300ms&electionDelay=500ms&peerTimeout=" + PEER_TIMEOUT.toMillis()
          + "ms&secret=" + NativeTargets.SECRET);
    }
    List<LockService> open = new ArrayList<>();
    try {
      for (int i = 0; i < 4; i++) {
        open.add(LockProviders.connect(urls.get(i)));
      }
      // the four are linked (a node that has had fewer than three members connected for peerTimeout, as a node
      // whose peers are slow to start may, ends its waits at once: that is the rule, not what is tested here)
      long linked = System.nanoTime() + NativeTargets.LINK_WAIT.toNanos();
      for (int i = 0; i < 4; i++) {
        Transport t = NativeNodes.of(open.get(i)).transport();
        for (int j = 0; j < 4; j++) {
          while (j != i && !t.isUp(ids.get(j))) {
            assertTrue(System.nanoTime() < linked, "the first four members did not link up");
            Thread.sleep(20);
          }
        }
      }
      LockService closing = LockProviders.connect(urls.get(2));
      Future<Outcome> first = wait(() -> Optional.of(open.get(0).lock("x").acquire()));
      Future<Outcome> timed = wait(() -> open.get(1).lock("x").tryAcquire(LONG));
      Future<Outcome> closed = wait(() -> closing.lock("x").tryAcquire(LONG));
      Thread.sleep(3 * PEER_TIMEOUT.toMillis());
      for (Future<Outcome> w : List.of(first, timed, closed)) {
        if (w.isDone()) {
          fail("a wait ended while 4 of 5 members were up and the first election waited for the fifth: " + w.get());
        }
      }
      closing.close();
      Outcome c = closed.get(30, TimeUnit.SECONDS);
      assertInstanceOf(ServiceClosedException.class, c.error(), "a closed service's wait: " + c);

      open.add(LockProviders.connect(urls.get(4)));
      Outcome a = first.get(LONG.toSeconds(), TimeUnit.SECONDS);
      assertTrue(a.granted(), "the first acquire() after the election: " + a);
      Outcome t = timed.get(LONG.toSeconds(), TimeUnit.SECONDS);
      assertTrue(t.granted(), "the long wait after the election: " + t);
    } finally {
      for (LockService s : open) {
        s.close();
      }
    }
  }

  /**
   * (c) With two of three members down, the last one can tell that no quorum can form: its long wait and its
   * {@code acquire()} end with {@link ServiceUnavailableException} saying so, a peer timeout after it lost them, well
   * before their maxWait. The member left up is the one that serves (leads), whose own server never was unreachable.
   */
  @ParameterizedTest
  @ValueSource(strings = {"lease", "buckets", "bakery"})
  void withTheMajorityDownAWaitEndsEarlySayingWhy(String algorithm) throws Exception {
    NativeTargets.Cluster c = NativeTargets.tcp(algorithm, PEER_TIMEOUT);
    List<LockService> open = new ArrayList<>();
    try {
      LockService probe = c.open(0);
      open.add(probe);
      String serverId = NativeNodes.of(probe).view().orElseThrow().leaders().get(0).nodeId();
      int k = c.ids.indexOf(serverId);
      LockService s = c.open(k);
      open.add(s);
      for (int i = 0; i < 3; i++) {
        if (i != k) {
          if (i == 0) {
            probe.close();
          }
          c.stopNode(i);
        }
      }
      // once the member left sees both links down: before that it may still grant as the server it was
      Transport left = c.transport(k);
      long seen = System.nanoTime() + NativeTargets.LINK_WAIT.toNanos();
      while (c.ids.stream().anyMatch(id -> !id.equals(serverId) && left.isUp(id))) {
        assertTrue(System.nanoTime() < seen, "the member left did not see the others go");
        Thread.sleep(20);
      }
      Duration maxWait = Duration.ofSeconds(40);
      long start = System.nanoTime();
      Future<Outcome> timed = wait(() -> s.lock("x").tryAcquire(maxWait));
      Future<Outcome> untimed = wait(() -> Optional.of(s.lock("y").acquire()));
      Outcome t;
      Outcome u;
      try {
        t = timed.get(maxWait.toSeconds() + 10, TimeUnit.SECONDS);
        u = untimed.get(10, TimeUnit.SECONDS);
      } catch (TimeoutException e) {
        throw new AssertionError("acquire() still waits with two of three members down, "
            + (System.nanoTime() - start) / 1_000_000 + " ms after they went");
      }
      for (Outcome o : List.of(t, u)) {
        assertInstanceOf(ServiceUnavailableException.class, o.error(), "with the majority down: " + o);
        assertTrue(o.error().getMessage().contains("1 of 3 members connected"), o.error().getMessage());
        assertTrue(o.elapsedMillis() < maxWait.toMillis() / 2, "ended at " + o.elapsedMillis() + " ms, not early: " + o);
      }
    } finally {
      for (LockService s : open) {
        s.close();
      }
      c.close();
    }
  }

  // ------------------------------------------------------------------ helpers

  /** How a wait ended, and after how long. */
  private record Outcome(long startedAt, long endedAt, Lease lease, Throwable error) {
    boolean granted() {
      return lease != null;
    }

    long elapsedMillis() {
      return (endedAt - startedAt) / 1_000_000;
    }

    long at(long since) {
      return (endedAt - since) / 1_000_000;
    }

    @Override
    public String toString() {
      return (lease != null ? "granted" : error != null ? error.toString() : "empty") + " after " + elapsedMillis()
          + " ms";
    }
  }

  /** Runs a wait on a thread of its own; a granted lease is released at once. */
  private Future<Outcome> wait(Callable<Optional<Lease>> w) {
    return threads.submit(() -> {
      long start = System.nanoTime();
      try {
        Optional<Lease> l = w.call();
        long end = System.nanoTime();
        l.ifPresent(Lease::release);
        return new Outcome(start, end, l.orElse(null), null);
      } catch (Exception e) {
        return new Outcome(start, System.nanoTime(), null, e);
      }
    });
  }

  /** Waits until {@code s}'s node has a view whose server (first leader) is {@code serverId}. */
  private static void awaitServer(LockService s, String serverId, Process process, Path log) throws Exception {
    long deadline = System.nanoTime() + PROCESS_START.toNanos();
    while (true) {
      Optional<Observation.View> v = NativeNodes.of(s).view();
      if (v.isPresent() && !v.get().leaders().isEmpty() && v.get().leaders().get(0).nodeId().equals(serverId)) {
        return;
      }
      if (!process.isAlive() || System.nanoTime() > deadline) {
        fail("no view served by " + serverId + " within " + PROCESS_START + ": " + v + "; member log:\n"
            + Files.readString(log));
      }
      Thread.sleep(20);
    }
  }

  private static List<String> ports(int n) {
    List<String> l = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      l.add("127.0.0.1:" + LoopbackPorts.freePort());
    }
    return l;
  }
}
