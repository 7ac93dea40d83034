package dev.tumbler.lock.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tumbler.lock.Capability;
import dev.tumbler.lock.LeaderElection;
import dev.tumbler.lock.Lease;
import dev.tumbler.lock.LockProviders;
import dev.tumbler.lock.LockService;
import dev.tumbler.lock.ServiceUnavailableException;
import dev.tumbler.lock.UnsupportedCapabilityException;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.params.SetParams;

/** Redlock over three real, independent Redis masters, some of them down. */
class RedlockTest {
  static List<EmbeddedRedis> masters;

  @BeforeAll
  static void start() {
    masters = List.of(EmbeddedRedis.start(), EmbeddedRedis.start(), EmbeddedRedis.start());
  }

  @AfterAll
  static void stop() {
    masters.forEach(EmbeddedRedis::close);
  }

  @BeforeEach
  void allUp() {
    for (EmbeddedRedis m : masters) {
      if (!m.isRunning()) {
        m.restart();
      }
    }
  }

  static LockService open() {
    return LockProviders.connect("lock:redis://" + masters.get(0).address() + "," + masters.get(1).address() + ","
        + masters.get(2).address() + "?mode=redlock&leaseTime=1500ms&timeout=300ms");
  }

  /**
   * The last live reader's release is published though a reader that lapsed without releasing (it crashed) is still
   * listed: the release counted every listed reader, so it published nothing, and a writer refused while that reader
   * was alive slept until the live reader's term or its {@code recheck} (here 30 s and a minute).
   */
  @Test
  void theLastLiveReadersReleaseWakesAWriterThoughALapsedReaderIsListed() throws Exception {
    String url = "lock:redis://" + masters.get(0).address() + "," + masters.get(1).address() + ","
        + masters.get(2).address() + "?mode=redlock&leaseTime=30s&recheck=60s";
    String readers = new RedisKeys("").readWrite("lapsed").get(1);
    try (LockService b = LockProviders.connect(url); LockService c = LockProviders.connect(url)) {
      Lease reader = b.readWriteLock("lapsed").readLock().acquire();
      // a reader that crashed: listed on every master, its term ending in 700 ms
      for (EmbeddedRedis m : masters) {
        try (Jedis j = m.client()) {
          List<String> time = j.time();
          long nowMs = Long.parseLong(time.get(0)) * 1000 + Long.parseLong(time.get(1)) / 1000;
          j.zadd(readers, nowMs + 700, "crashed-reader");
        }
      }
      java.util.concurrent.CompletableFuture<Optional<Lease>> writer = java.util.concurrent.CompletableFuture.supplyAsync(
          () -> {
            try {
              return c.readWriteLock("lapsed").writeLock().tryAcquire(Duration.ofSeconds(50));
            } catch (InterruptedException e) {
              throw new IllegalStateException(e);
            }
          });
      Thread.sleep(1500); // the writer was refused and waits; the crashed reader's term has ended, still listed
      assertFalse(writer.isDone(), "the writer was granted while a reader held the lock: " + writer.getNow(null));
      reader.release();
      Optional<Lease> w;
      try {
        w = writer.get(10, java.util.concurrent.TimeUnit.SECONDS);
      } catch (java.util.concurrent.TimeoutException e) {
        throw new AssertionError("the writer was not granted within 10 s of the last live reader's release");
      }
      assertTrue(w.isPresent(), "the writer was not granted");
      w.get().release();
    }
  }

  /**
   * An acquire refused by a majority split among holders (contenders that each won some masters, all undoing) wakes the
   * other waiters when it undoes its own grant: nobody holds the lock then, and they slept until {@code recheck}. One
   * refused by a majority that one holder holds undoes silently (waking them would only send them to a held lock,
   * over and over).
   */
  @Test
  void anUndoWakesTheOthersOnlyWhenNoHolderHasAMajority() throws Exception {
    String key = new RedisKeys("").mutex(RedisKeys.Kind.MUTEX, "split").getFirst();
    String channel = new RedisKeys("").channel(RedisKeys.Kind.MUTEX, "split");
    java.util.concurrent.LinkedBlockingQueue<String> published = new java.util.concurrent.LinkedBlockingQueue<>();
    redis.clients.jedis.JedisPubSub listener = new redis.clients.jedis.JedisPubSub() {
      @Override
      public void onMessage(String ch, String message) {
        published.add(message);
      }
    };
    Thread subscriber = Thread.ofPlatform().start(() -> {
      try (Jedis m2 = masters.get(2).client()) {
        m2.subscribe(listener, channel);
      }
    });
    try (LockService a = open(); Jedis m0 = masters.get(0).client(); Jedis m1 = masters.get(1).client();
        Jedis m2 = masters.get(2).client()) {
      long until = System.nanoTime() + 10_000_000_000L;
      while (m2.pubsubNumSub(channel).getOrDefault(channel, 0L) < 1) {
        assertTrue(System.nanoTime() - until < 0, "the test's subscriber never subscribed");
        Thread.sleep(10);
      }
      // one holder on two masters: a's grant on the third is undone without a word
      m0.set(key, "holder", SetParams.setParams().px(10_000));
      m1.set(key, "holder", SetParams.setParams().px(10_000));
      assertTrue(a.lock("split").tryAcquire(Duration.ZERO).isEmpty());
      assertEquals(null, published.poll(500, java.util.concurrent.TimeUnit.MILLISECONDS),
          "an undo behind a holder with a majority woke the waiters");
      // two contenders, one master each: a's undo is published, on the master where it was granted
      m1.set(key, "another-contender", SetParams.setParams().px(10_000));
      assertTrue(a.lock("split").tryAcquire(Duration.ZERO).isEmpty());
      assertTrue(published.poll(5, java.util.concurrent.TimeUnit.SECONDS) != null,
          "an undo after a split vote (nobody holds a majority) woke nobody");
      m0.del(key);
      m1.del(key);
    } finally {
      listener.unsubscribe();
      subscriber.join(5_000);
    }
  }

  @Test
  void grantsOnAMajorityWithOneMasterDownAndRefusesWithTwoDown() throws Exception {
    try (LockService a = open(); LockService b = open()) {
      masters.get(2).stop();
      Lease l = a.lock("one-down").tryAcquire(Duration.ofSeconds(5)).orElseThrow();
      assertTrue(b.lock("one-down").tryAcquire(Duration.ZERO).isEmpty(), "a majority holds it");
      Thread.sleep(1600); // more than a term: renewals on the remaining majority keep it
      assertTrue(l.isValid());
      assertTrue(b.lock("one-down").tryAcquire(Duration.ZERO).isEmpty());
      l.release();
      assertTrue(b.lock("one-down").tryAcquire(Duration.ofSeconds(2)).isPresent());

      masters.get(1).stop();
      assertThrows(ServiceUnavailableException.class, () -> a.lock("two-down").tryAcquire(Duration.ZERO));
    }
  }

  @Test
  void aGrantOnAMinorityIsGivenBackBeforeTheRefusalReturns() throws Exception {
    String key = new RedisKeys("").mutex(RedisKeys.Kind.MUTEX, "minority").getFirst();
    try (LockService a = open(); Jedis m0 = masters.get(0).client(); Jedis m1 = masters.get(1).client();
        Jedis m2 = masters.get(2).client()) {
      // a foreign holder on two masters: the third grants, a minority, which must be undone there
      m0.set(key, "someone-else", SetParams.setParams().px(10_000));
      m1.set(key, "someone-else", SetParams.setParams().px(10_000));
      assertTrue(a.lock("minority").tryAcquire(Duration.ZERO).isEmpty(), "one master of three grants nothing");
      assertFalse(m2.exists(key), "the third master's grant was given back");
      assertEquals("someone-else", m0.get(key), "the undo touches only its own grant");
    }
  }

  @Test
  void leaderIsWhoHoldsAMajorityWhateverTheFirstMasterSays() throws Exception {
    String key = new RedisKeys("").mutex(RedisKeys.Kind.ELECTION, "lookup").getFirst();
    try (LockService a = open(); LockService b = open(); Jedis m0 = masters.get(0).client()) {
      LeaderElection leader = a.election("lookup").join();
      assertTrue(leader.awaitLeadership(Duration.ofSeconds(5)), "a sole candidate did not lead");
      LeaderElection other = b.election("lookup"); // not a candidate: it only asks who leads
      Optional<String> expected = Optional.of(leader.candidateId());
      assertEquals(expected, other.leader());
      // the grant is gone from the first master (it expired there, or the master restarted); the other two
      // keep the term, and renewals go on on that majority
      m0.del(key);
      assertEquals(expected, other.leader(), "the first master holds nothing");
      // or the first master holds the grant of a candidate that won it alone and is about to give it back
      m0.set(key, "loser|someone:1", SetParams.setParams().px(10_000));
      assertEquals(expected, other.leader(), "the first master holds a losing candidate's grant");
      assertTrue(leader.isLeader());
    }
    String alone = new RedisKeys("").mutex(RedisKeys.Kind.ELECTION, "minority-only").getFirst();
    try (LockService b = open(); Jedis m0 = masters.get(0).client()) {
      m0.set(alone, "loser|someone:2", SetParams.setParams().px(10_000));
      assertEquals(Optional.empty(), b.election("minority-only").leader(),
          "a grant on one master of three is nobody's term");
    }
  }

  @Test
  void aWaiterRefusedByTheHoldersMajorityDoesNotWakeItselfWithItsOwnUndo() throws Exception {
    List<String> keys = new RedisKeys("").mutex(RedisKeys.Kind.MUTEX, "outside-majority");
    Duration maxWait = Duration.ofSeconds(1);
    Duration recheck = Duration.ofMillis(250);
    String url = "lock:redis://" + masters.get(0).address() + "," + masters.get(1).address() + ","
        + masters.get(2).address() + "?mode=redlock&leaseTime=10s&timeout=300ms&recheck=" + recheck.toMillis() + "ms";
    try (LockService a = LockProviders.connect(url); LockService b = LockProviders.connect(url);
        Jedis m0 = masters.get(0).client()) {
      Lease held = a.lock("outside-majority").acquire();
      // the holder keeps masters 1 and 2, a majority; master 0 is free, so every attempt of the waiter is
      // granted there (raising its fencing counter) and undone
      m0.del(keys.getFirst());
      long before = Long.parseLong(m0.get(keys.getLast()));
      assertTrue(b.lock("outside-majority").tryAcquire(maxWait).isEmpty(), "a majority holds it");
      long attempts = Long.parseLong(m0.get(keys.getLast())) - before;
      // one before subscribing, one once subscribed, one per recheck, one at the deadline
      long bound = 2 + maxWait.toMillis() / recheck.toMillis() + 1;
      assertTrue(attempts <= bound, attempts + " attempts in " + maxWait.toMillis() + " ms; at most " + bound
          + " without a wake-up: the undo of each refused attempt woke the waiter again");
      assertFalse(m0.exists(keys.getFirst()), "the last attempt's grant on master 0 was given back");
      assertTrue(held.isValid());
      held.release();
    }
  }

  @Test
  void aHolderLosesItsLeaseWhenTheMajorityGoesAway() throws Exception {
    try (LockService a = open()) {
      Lease l = a.lock("majority-lost").acquire();
      masters.get(0).stop();
      masters.get(1).stop();
      long t0 = System.nanoTime();
      while (l.isValid() && System.nanoTime() - t0 < 5_000_000_000L) {
        Thread.sleep(20);
      }
      assertFalse(l.isValid(), "renewals on one master of three must not keep the lease");
    }
  }

  @Test
  void tokensStayIncreasingWhenTheMajorityChangesAndCountersDiffer() throws Exception {
    // make the masters' counters disagree wildly: master 0 is far ahead
    String fence = new RedisKeys("").mutex(RedisKeys.Kind.MUTEX, "skew").getLast();
    try (Jedis j = masters.get(0).client()) {
      // far ahead, but below 2^53: Lua numbers are doubles (time-seeded tokens are about 2^50.6)
      j.set(fence, Long.toString(1L << 52));
    }
    try (LockService a = open()) {
      long first;
      try (Lease l = a.lock("skew").acquire()) {
        first = l.fencingToken();
      }
      assertTrue(first > 1L << 52, "the majority's largest counter wins");
      // master 0 leaves: the next grant is on masters 1 and 2 only, whose own counters were far behind
      masters.get(0).stop();
      try (Lease l = a.lock("skew").tryAcquire(Duration.ofSeconds(5)).orElseThrow()) {
        assertTrue(l.fencingToken() > first, l.fencingToken() + " > " + first
            + ": the first grant raised its whole majority's counters");
      }
    }
  }

  @Test
  void everyGrantKeepsTheCountersOfItsMajorityForADay() throws Exception {
    String fence = new RedisKeys("").mutex(RedisKeys.Kind.MUTEX, "kept").getLast();
    try (LockService a = open()) {
      a.lock("kept").acquire().release();
      // the counters were seeded hours ago: a few seconds of their day are left
      for (EmbeddedRedis m : masters) {
        try (Jedis j = m.client()) {
          j.pexpire(fence, 5_000);
        }
      }
      a.lock("kept").acquire().release();
      for (EmbeddedRedis m : masters) {
        try (Jedis j = m.client()) {
          long ttl = j.pttl(fence);
          assertTrue(ttl > 86_400_000L - 60_000L, "master " + m.address() + ": the counter expires in " + ttl + " ms");
        }
      }
    }
  }

  @Test
  void countersLeftAtOneOnEveryMasterDoNotMakeTokensGoBack() throws Exception {
    String fence = new RedisKeys("").mutex(RedisKeys.Kind.MUTEX, "left-at-one").getLast();
    try (LockService a = open()) {
      long first;
      try (Lease l = a.lock("left-at-one").acquire()) {
        first = l.fencingToken();
      }
      // every master lost its counter, and something incremented the new ones outside a script
      for (EmbeddedRedis m : masters) {
        try (Jedis j = m.client()) {
          j.del(fence);
          j.incr(fence);
        }
      }
      try (Lease l = a.lock("left-at-one").acquire()) {
        assertTrue(l.fencingToken() > first, l.fencingToken() + " > " + first);
      }
    }
  }

  @Test
  void aWaiterIsWokenByTheReleaseWithOneMasterDown() throws Exception {
    masters.get(1).stop();
    String slow = "lock:redis://" + masters.get(0).address() + "," + masters.get(1).address() + ","
        + masters.get(2).address() + "?mode=redlock&leaseTime=10s&recheck=5s&timeout=300ms";
    try (LockService a = LockProviders.connect(slow); LockService b = LockProviders.connect(slow)) {
      for (int i = 0; i < 3; i++) {
        Lease l = a.lock("push").acquire();
        java.util.concurrent.CompletableFuture<Lease> waiting = java.util.concurrent.CompletableFuture.supplyAsync(() -> {
          try {
            return b.lock("push").tryAcquire(Duration.ofSeconds(20)).orElseThrow();
          } catch (InterruptedException e) {
            throw new RuntimeException(e);
          }
        });
        Thread.sleep(300);
        assertFalse(waiting.isDone());
        l.release();
        // without the push the waiter would sleep 5 s (recheck) or 10 s (the holder's term)
        waiting.get(2, java.util.concurrent.TimeUnit.SECONDS).release();
      }
    }
  }

  @Test
  void capabilitiesAreHonest() {
    try (LockService a = open()) {
      assertTrue(a.supports(Capability.FAULT_TOLERANT));
      assertTrue(a.supports(Capability.FENCING));
      assertFalse(a.supports(Capability.SEMAPHORE), "permits do not add up over a majority");
      assertThrows(UnsupportedCapabilityException.class, () -> a.semaphore("s", 2));
    }
  }

  @Test
  void connectNeedsAMajority() {
    masters.get(1).stop();
    masters.get(2).stop();
    ServiceUnavailableException e = assertThrows(ServiceUnavailableException.class, RedlockTest::open);
    assertTrue(e.getMessage().contains("1 of 3"), e.getMessage());
  }

  @Test
  void oneMasterDownAtConnectIsFine() throws Exception {
    masters.get(0).stop();
    try (LockService a = open()) {
      Optional<Lease> l = a.lock("down-at-start").tryAcquire(Duration.ofSeconds(5));
      assertTrue(l.isPresent());
      l.get().release();
      assertEquals("redis", a.info().provider());
    }
  }
}
