package dev.tumbler.lock.tck;

import static dev.tumbler.lock.tck.LockTck.*;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tumbler.lock.Capability;
import dev.tumbler.lock.Lease;
import dev.tumbler.lock.Lock;
import dev.tumbler.lock.LockService;
import dev.tumbler.lock.ReadWriteLock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The TCK group "read/write" ({@link LockTck.ReadWrite}; needs: READ_WRITE). It checks: readers share; a writer
 * excludes readers and writers; readers exclude a writer until the last leaves; mixed contention with a witness;
 * write tokens increase.
 */
abstract class ReadWriteGroup extends TckGroup {

  ReadWriteGroup(LockTck tck) {
    super(tck);
  }

  @Test
  @DisplayName("readers share the lock")
  void readersShare() throws InterruptedException {
    String n = name("rw-share");
    LockService sa = open();
    ReadWriteLock a = sa.readWriteLock(n);
    ReadWriteLock b = open().readWriteLock(n);
    assertEquals(n, a.name());
    assertEquals(n, a.readLock().name(), "readLock().name()");
    assertEquals(n, a.writeLock().name(), "writeLock().name()");
    Lease r1 = held(a.readLock().tryAcquire(GRANT_WAIT), "a free read lock was refused");
    Lease r2 = held(b.readLock().tryAcquire(SLACK), "a second reader was refused");
    Lease r3 = held(a.readLock().tryAcquire(SLACK), "a second reader through the same handle was refused");
    Lease r4 = held(sa.readWriteLock(n).readLock().tryAcquire(SLACK),
        "a reader through another handle of the same service was refused");
    for (Lease r : List.of(r1, r2, r3, r4)) {
      assertTrue(r.isValid(), "a reader's lease ended when another reader came");
    }
    for (Lease r : List.of(r1, r2, r3, r4)) {
      r.release();
    }
    held(b.writeLock().tryAcquire(releaseBound()), "the writer was refused after every reader left").release();
  }

  @Test
  @DisplayName("a writer excludes readers and writers")
  void writerExcludes() throws InterruptedException {
    String n = name("rw-writer");
    ReadWriteLock a = open().readWriteLock(n);
    ReadWriteLock b = open().readWriteLock(n);
    Lease w = a.writeLock().acquire();
    assertTrue(probe(b.readLock()).isEmpty(), "a reader was admitted beside a writer");
    long t0 = System.nanoTime();
    assertTrue(b.readLock().tryAcquire(SHORT_WAIT).isEmpty(), "a reader was admitted beside a writer");
    assertWaited(t0, SHORT_WAIT, "readLock().tryAcquire");
    assertTrue(probe(b.writeLock()).isEmpty(), "two writers at once");
    assertTrue(probe(a.readLock()).isEmpty(), "a reader through the writer's own service was admitted");
    assertTrue(probe(a.writeLock()).isEmpty(),
        "a second writer through the writer's own service was admitted (the write lock is not reentrant)");
    ReadWriteLock other = open().readWriteLock(name("rw-other"));
    held(other.writeLock().tryAcquire(SLACK), "a writer of another name was refused: the write lease excludes only its"
        + " own name").release();
    w.release();
    held(b.readLock().tryAcquire(releaseBound()), "a reader was refused after the writer left").release();
  }

  @Test
  @DisplayName("readers exclude a writer until the last leaves")
  void readersExcludeWriter() throws Exception {
    String n = name("rw-readers");
    ReadWriteLock a = open().readWriteLock(n);
    ReadWriteLock b = open().readWriteLock(n);
    ReadWriteLock c = open().readWriteLock(n);
    Lease r1 = a.readLock().acquire();
    Lease r2 = b.readLock().acquire();
    assertTrue(probe(c.writeLock()).isEmpty(), "a writer was admitted beside readers");
    Job<Optional<Lease>> writer = start("rw-writer", () -> c.writeLock().tryAcquire(GRANT_WAIT));
    r1.release();
    Thread.sleep(200);
    assertFalse(writer.result().isDone(), "a writer was admitted beside a reader");
    r2.release();
    Lease w = held(writer.get(GRANT_WAIT), "the writer was not admitted after the readers left");
    w.release();
  }

  @Test
  @DisplayName("look-alike names are distinct read/write locks")
  void namesAreDistinct() throws InterruptedException {
    String p = name("rw-names") + "-";
    LockService a = open();
    LockService b = open();
    List<String> names = List.of(p + "a/b", p + "a.b", p + "a:b", p + "a_b", p + "A/B", p + "a%2Fb");
    List<Lease> writes = new ArrayList<>();
    for (String n : names) {
      writes.add(held(a.readWriteLock(n).writeLock().tryAcquire(SLACK),
          "the write lock of '" + n + "' was refused while other names were write-locked: it collides with one of them"));
    }
    // (a write lease that ran out under load may be given again: notGrantedWhileHeld tells that from a collision)
    for (int i = 0; i < names.size(); i++) {
      String n = names.get(i);
      notGrantedWhileHeld(b.readWriteLock(n).readLock(), a.readWriteLock(n).writeLock(), writes, i,
          "a reader of '" + n + "' was admitted beside its writer");
    }
    writes.get(0).release();
    held(b.readWriteLock(names.get(0)).readLock().tryAcquire(releaseBound()),
        "'" + names.get(0) + "' was released but a reader was refused").release();
    for (int i = 1; i < names.size(); i++) {
      String n = names.get(i);
      notGrantedWhileHeld(b.readWriteLock(n).writeLock(), a.readWriteLock(n).writeLock(), writes, i,
          "'" + n + "' is write-locked but a writer was admitted: releasing a look-alike freed it");
    }
    writes.subList(1, writes.size()).forEach(Lease::release);
  }

  @Test
  @DisplayName("mixed readers and writers under contention: the witness never sees a writer with anyone")
  void contention() throws Exception {
    String n = name("rw-contention");
    AtomicInteger readers = new AtomicInteger();
    AtomicInteger writers = new AtomicInteger();
    AtomicInteger violations = new AtomicInteger();
    AtomicInteger maxReaders = new AtomicInteger();
    List<Long> writeTokens = Collections.synchronizedList(new ArrayList<>());
    List<Job<Void>> jobs = new ArrayList<>();
    for (int s = 0; s < 2; s++) {
      ReadWriteLock rw = open().readWriteLock(n);
      for (int t = 0; t < 4; t++) {
        boolean writer = t % 2 == 0;
        jobs.add(start("rw-" + s + "-" + t, () -> {
          for (int r = 0; r < 6; r++) {
            Lock lock = writer ? rw.writeLock() : rw.readLock();
            Lease l = held(lock.tryAcquire(GRANT_WAIT.multipliedBy(2)), "no grant within the wait");
            if (writer) {
              if (writers.incrementAndGet() != 1 || readers.get() != 0) {
                violations.incrementAndGet();
              }
              writeTokens.add(l.fencingToken());
              Thread.sleep(2);
              writers.decrementAndGet();
            } else {
              maxReaders.accumulateAndGet(readers.incrementAndGet(), Math::max);
              if (writers.get() != 0) {
                violations.incrementAndGet();
              }
              Thread.sleep(3);
              readers.decrementAndGet();
            }
            l.release();
          }
          return null;
        }));
      }
    }
    for (Job<Void> j : jobs) {
      j.get(Duration.ofSeconds(90));
    }
    assertEquals(0, violations.get(), "a writer overlapped with another writer or a reader");
    if (declares(Capability.FENCING)) {
      for (int i = 1; i < writeTokens.size(); i++) {
        assertTrue(writeTokens.get(i) > writeTokens.get(i - 1), "write-lock tokens not increasing in grant order");
      }
    }
  }
}
