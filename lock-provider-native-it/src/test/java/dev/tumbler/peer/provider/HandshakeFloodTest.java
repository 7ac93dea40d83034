package dev.tumbler.peer.provider;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tumbler.lock.Lease;
import dev.tumbler.lock.LockException;
import dev.tumbler.lock.LockService;
import dev.tumbler.peer.transport.Transport;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The attack of a stalled-handshake flood on one peer of a 3-peer TCP cluster: 70 connections to it, each
 * sending two bytes and stalling, reconnecting as soon as it is closed. The other two peers keep being granted
 * locks (Lamport needs the attacked peer for every grant), a link to the attacked peer that breaks comes back
 * within its reconnect backoff plus one handshake, and the log stays small. Prints its figures.
 */
@Timeout(180)
class HandshakeFloodTest {
  private static final int ATTACKERS = 70;
  /** The cluster's redial backoff ceiling ({@code backoffMax=500ms} in {@link NativeTargets#tcp}). */
  private static final Duration BACKOFF_MAX = Duration.ofMillis(500);
  /** The transport's default handshake time-out: a redial must get through within the backoff plus this. */
  private static final Duration HANDSHAKE_TIMEOUT = Duration.ofSeconds(5);
  private static final long LOG_LIMIT = 1 << 20;

  @Test
  void aFloodOnOnePeerLeavesTheOthersGrantingAndABrokenLinkRejoins() throws Exception {
    NativeTargets.Cluster c = NativeTargets.tcp("lamport");
    PrintStream savedErr = System.err;
    CountingStream logged = new CountingStream();
    AtomicBoolean attacking = new AtomicBoolean(true);
    AtomicLong connections = new AtomicLong();
    List<Thread> attackers = new ArrayList<>();
    try (LockService s1 = c.open(1); LockService s2 = c.open(2)) {
      long before = grants(s1, s2, Duration.ofSeconds(2));
      int port = Integer.parseInt(c.ids.get(0).substring(c.ids.get(0).lastIndexOf(':') + 1));
      System.setErr(new PrintStream(logged, true, StandardCharsets.UTF_8));
      for (int i = 0; i < ATTACKERS; i++) {
        attackers.add(Thread.ofVirtual().start(() -> {
          while (attacking.get()) {
            try (Socket s = new Socket("127.0.0.1", port)) {
              connections.incrementAndGet();
              s.getOutputStream().write(new byte[] {0, 0}); // half a length prefix, then nothing
              s.getOutputStream().flush();
              s.getInputStream().read(); // until the peer closes it
            } catch (IOException e) {
              // refused or reset: again
            }
          }
        }));
      }
      Thread.sleep(1000); // the flood is under way, and every stalled slot taken
      long during = grants(s1, s2, Duration.ofSeconds(3));

      // one link to the attacked peer breaks: peer 1 must handshake with peer 0 again, through the flood
      Transport t1 = c.transport(1);
      String id0 = c.ids.get(0);
      c.breakLink(1, 0);
      long broken = System.nanoTime();
      long downBy = broken + Duration.ofSeconds(5).toNanos();
      while (t1.isUp(id0) && System.nanoTime() - downBy < 0) {
        Thread.sleep(1);
      }
      long upBy = System.nanoTime() + BACKOFF_MAX.plus(HANDSHAKE_TIMEOUT).toNanos();
      while (!t1.isUp(id0) && System.nanoTime() - upBy < 0) {
        Thread.sleep(5);
      }
      long rejoinMs = (System.nanoTime() - broken) / 1_000_000;
      boolean rejoined = t1.isUp(id0);
      long after = rejoined ? grants(s1, s2, Duration.ofSeconds(2)) : 0;
      attacking.set(false);
      // the peer closes every stalled connection within a few handshake time-outs: one bound for them all, and what
      // the node's threads were doing when it is not met
      long joinBy = System.nanoTime() + HANDSHAKE_TIMEOUT.multipliedBy(6).toNanos();
      for (Thread t : attackers) {
        t.join(Math.max(1, (joinBy - System.nanoTime()) / 1_000_000));
      }
      List<Thread> left = attackers.stream().filter(Thread::isAlive).toList();
      if (!left.isEmpty()) {
        System.setErr(savedErr);
        StringBuilder dump = new StringBuilder();
        Thread.getAllStackTraces().forEach((th, st) -> {
          if (!th.isVirtual() && th.getName().contains("tumbler")) {
            dump.append(th.getName()).append(' ').append(th.getState()).append('\n');
            for (int i = 0; i < Math.min(8, st.length); i++) {
              dump.append("    at ").append(st[i]).append('\n');
            }
          }
        });
        throw new AssertionError(left.size() + " of " + ATTACKERS + " attackers still wait for the flooded peer to "
            + "close their stalled connections " + HANDSHAKE_TIMEOUT.multipliedBy(6).toSeconds() + " s after the "
            + "flood stopped (handshake time-out " + HANDSHAKE_TIMEOUT.toSeconds() + " s); the node's threads:\n" + dump);
      }
      System.setErr(savedErr);
      String figures = "flood on peer 0: " + ATTACKERS + " stalled connections, " + connections.get()
          + " connections in all; grants by peers 1 and 2: " + before + " in 2 s before, " + during
          + " in 3 s during, " + after + " in 2 s after the rejoin; broken link 1->0 up again after " + rejoinMs
          + " ms (bound: backoff " + BACKOFF_MAX.toMillis() + " ms + handshake " + HANDSHAKE_TIMEOUT.toMillis()
          + " ms); log written meanwhile: " + logged.count() + " bytes";
      System.out.println(figures);
      assertTrue(during > 0, "the other peers were granted nothing during the flood: " + figures);
      assertTrue(rejoined, "the broken link did not come back through the flood: " + figures);
      assertTrue(after > 0, "no grants after the rejoin: " + figures);
      assertTrue(logged.count() < LOG_LIMIT, "the flood wrote " + logged.count() + " bytes of log: " + figures
          + "\nit began:\n" + logged.head());
    } finally {
      attacking.set(false);
      System.setErr(savedErr);
      c.close();
    }
  }

  /** Grants of one lock by two threads, one per service, in {@code d}. */
  private static long grants(LockService a, LockService b, Duration d) throws InterruptedException {
    AtomicLong n = new AtomicLong();
    long until = System.nanoTime() + d.toNanos();
    List<Thread> ts = new ArrayList<>();
    for (LockService s : List.of(a, b)) {
      ts.add(Thread.ofPlatform().start(() -> {
        while (System.nanoTime() - until < 0) {
          try {
            Optional<Lease> l = s.lock("flood").tryAcquire(Duration.ofMillis(500));
            if (l.isPresent()) {
              l.get().release();
              n.incrementAndGet();
            }
          } catch (LockException e) {
            // counted as no grant
          } catch (InterruptedException e) {
            return;
          }
        }
      }));
    }
    for (Thread t : ts) {
      t.join();
    }
    return n.get();
  }

  /** Counts the bytes written and keeps the first few kilobytes, for the failure message. */
  private static final class CountingStream extends OutputStream {
    private static final int KEEP = 8 * 1024;
    private final ByteArrayOutputStream head = new ByteArrayOutputStream();
    private final AtomicLong count = new AtomicLong();

    @Override
    public synchronized void write(int b) {
      count.incrementAndGet();
      if (head.size() < KEEP) {
        head.write(b);
      }
    }

    @Override
    public synchronized void write(byte[] b, int off, int len) {
      count.addAndGet(len);
      if (head.size() < KEEP) {
        head.write(b, off, Math.min(len, KEEP - head.size()));
      }
    }

    long count() {
      return count.get();
    }

    synchronized String head() {
      return head.toString(StandardCharsets.UTF_8);
    }
  }
}
