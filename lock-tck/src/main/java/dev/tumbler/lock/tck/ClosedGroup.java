package dev.tumbler.lock.tck;

import static dev.tumbler.lock.tck.LockTck.*;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tumbler.lock.Capability;
import dev.tumbler.lock.LeaderElection;
import dev.tumbler.lock.Lease;
import dev.tumbler.lock.LeaseLostEvent;
import dev.tumbler.lock.LeaseLostException;
import dev.tumbler.lock.Lock;
import dev.tumbler.lock.LockService;
import dev.tumbler.lock.Semaphore;
import dev.tumbler.lock.ServiceClosedException;
import dev.tumbler.lock.TransactionOptions;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The TCK group "closed service" ({@link LockTck.Closed}; needs: —). It checks: close() idempotent; every factory
 * and every handle taken before close throws ServiceClosedException; close releases held leases (others can
 * acquire at once) and fires onLost with SERVICE_CLOSED; close ends waits in progress with ServiceClosedException,
 * leaving nothing held.
 */
abstract class ClosedGroup extends TckGroup {

  ClosedGroup(LockTck tck) {
    super(tck);
  }

  @Test
  @DisplayName("close is idempotent; every factory then throws ServiceClosedException")
  void factoriesThrow() {
    LockService s = open();
    s.close();
    s.close();
    assertTrue(s.isClosed());
    String n = name("closed");
    assertThrows(ServiceClosedException.class, () -> s.lock(n), "lock() after close");
    if (declares(Capability.READ_WRITE)) {
      assertThrows(ServiceClosedException.class, () -> s.readWriteLock(n), "readWriteLock() after close");
    }
    if (declares(Capability.SEMAPHORE)) {
      assertThrows(ServiceClosedException.class, () -> s.semaphore(n, 1), "semaphore() after close");
    }
    if (declares(Capability.LEADER_ELECTION)) {
      assertThrows(ServiceClosedException.class, () -> s.election(n), "election() after close");
    }
    if (declares(Capability.TRANSACTIONS)) {
      assertThrows(ServiceClosedException.class, () -> s.beginTransaction(TransactionOptions.defaults()),
          "beginTransaction() after close");
    }
  }

  @Test
  @DisplayName("handles taken before close throw ServiceClosedException")
  void handlesThrow() throws Exception {
    LockService s = open();
    String n = name("closed-handle");
    Lock lock = s.lock(n);
    Semaphore sem = declares(Capability.SEMAPHORE) ? s.semaphore(n + "-sem", 2) : null;
    LeaderElection election = declares(Capability.LEADER_ELECTION) ? s.election(n + "-election") : null;
    s.close();
    if (election != null) {
      assertThrows(ServiceClosedException.class, election::join, "join() of an election whose service closed");
    }
    assertThrows(ServiceClosedException.class, lock::acquire, "acquire() after close");
    assertThrows(ServiceClosedException.class, () -> lock.tryAcquire(Duration.ZERO), "tryAcquire() after close");
    assertRejectsAsync(ServiceClosedException.class, "", "acquireAsync() after close", () -> lock.acquireAsync(Duration.ZERO));
    if (sem != null) {
      assertThrows(ServiceClosedException.class, () -> sem.acquire(1), "semaphore acquire() after close");
    }
  }

  @Test
  @DisplayName("close releases held leases and fires onLost with SERVICE_CLOSED")
  void closeReleases() throws InterruptedException {
    LockService a = open();
    LockService b = open();
    String n = name("close-release");
    Lease l = a.lock(n).acquire();
    AtomicReference<LeaseLostEvent> event = new AtomicReference<>();
    l.onLost(event::set);
    a.close();
    assertFalse(l.isValid(), "a lease is valid after its service closed");
    assertNotNull(event.get(), "close did not fire the lost listener");
    assertEquals(LeaseLostEvent.Reason.SERVICE_CLOSED, event.get().reason());
    l.release();
    held(b.lock(n).tryAcquire(releaseBound()), "close did not release the lock").release();
  }

  @Test
  @DisplayName("close loses every lease: listeners once each, in order, past one that throws; a late one at once")
  void closeRunsListeners() throws Exception {
    LockService a = open();
    LockService b = open();
    String n1 = name("close-listeners");
    String n2 = name("close-listeners");
    Lease l1 = a.lock(n1).acquire();
    Lease l2 = a.lock(n2).acquire();
    List<String> calls = new CopyOnWriteArrayList<>();
    List<String> calls2 = new CopyOnWriteArrayList<>();
    AtomicReference<Thread> closer = new AtomicReference<>();
    assertSame(l1, l1.onLost(e -> {
      closer.set(Thread.currentThread());
      calls.add("first");
    }), "onLost did not return its lease");
    l1.onLost(e -> {
      calls.add("throws");
      throw new IllegalStateException("tck: a listener that throws");
    });
    l1.onLost(e -> calls.add("third"));
    l2.onLost(e -> calls2.add(e.name() + " " + e.reason()));
    a.close();
    assertEquals(List.of("first", "throws", "third"), calls,
        "listeners must run once each, in the order added, and one that throws must not stop the others");
    assertEquals(List.of(n2 + " " + LeaseLostEvent.Reason.SERVICE_CLOSED), calls2, "the second lease's listener");
    assertSame(Thread.currentThread(), closer.get(), "the listeners did not run on the thread that closed the service");
    assertFalse(l1.isValid());
    assertFalse(l2.isValid(), "closing the service did not end every lease taken through it");
    assertEquals(Duration.ZERO, l2.remaining());
    assertThrows(LeaseLostException.class, l2::renew, "renew() of a lease whose service closed");
    // a listener added after the loss runs at once, on the calling thread, with the loss
    AtomicReference<Thread> ranOn = new AtomicReference<>();
    AtomicReference<LeaseLostEvent> late = new AtomicReference<>();
    l1.onLost(e -> {
      ranOn.set(Thread.currentThread());
      late.set(e);
    });
    assertSame(Thread.currentThread(), ranOn.get(), "a listener added after the loss did not run at once");
    assertEquals(LeaseLostEvent.Reason.SERVICE_CLOSED, late.get().reason());
    assertEquals(l1.fencingToken(), late.get().fencingToken(), "the event's fencing token");
    l1.release();
    l2.release();
    Thread.sleep(100);
    assertEquals(3, calls.size(), "a lost listener ran again");
    held(b.lock(n1).tryAcquire(releaseBound()), "close did not release the first lock").release();
    held(b.lock(n2).tryAcquire(releaseBound()), "close did not release every lease: the second lock stayed held")
        .release();
  }

  @Test
  @DisplayName("close ends waits in progress with ServiceClosedException, leaving nothing held")
  void closeEndsWaits() throws Exception {
    LockService a = open();
    LockService b = open();
    LockService c = open();
    String n = name("close-wait");
    Lease la = a.lock(n).acquire();
    Job<Lease> waiter = start("closed-waiter", () -> b.lock(n).acquire());
    Job<Optional<Lease>> timed = start("closed-timed-waiter", () -> b.lock(n).tryAcquire(GRANT_WAIT));
    CompletableFuture<Lease> async = b.lock(n).acquireAsync(GRANT_WAIT);
    Thread.sleep(200);
    b.close();
    Throwable t = waiter.failure(SLACK);
    assertTrue(t instanceof ServiceClosedException, "a wait ended by close() threw " + t);
    Throwable tt = timed.failure(SLACK);
    assertTrue(tt instanceof ServiceClosedException, "a tryAcquire wait ended by close() gave " + tt);
    ExecutionException ta = assertThrows(ExecutionException.class, () -> async.get(SLACK.toMillis(), TimeUnit.MILLISECONDS),
        "an acquireAsync wait was not ended by close()");
    assertTrue(ta.getCause() instanceof ServiceClosedException, "an acquireAsync wait ended by close() gave " + ta.getCause());
    la.release();
    held(c.lock(n).tryAcquire(releaseBound()), "the closed waiter left the lock taken").release();
  }
}
