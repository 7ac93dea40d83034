package dev.tumbler.peer.bakery;

import static dev.tumbler.peer.bakery.BakeryCluster.MS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tumbler.peer.core.Claim;
import dev.tumbler.peer.core.Output;
import org.junit.jupiter.api.Test;

/** The writer modes of seed 003 on a three-leader cluster (NATIVE-ALGORITHMS §3.9 #4–#6, B-V5–B-V8). */
class BakeryReadWriteTest {

  private static BakeryCluster cluster() {
    BakeryCluster c = new BakeryCluster(3, 4242);
    c.startAll();
    c.awaitView();
    return c;
  }

  @Test
  void readersShareAndAWriterExcludesThem() {
    BakeryCluster c = cluster();
    long r1 = c.acquire("n1", Claim.read("rw"));
    long r2 = c.acquire("n2", Claim.read("rw"));
    assertNotNull(c.req(r1).granted);
    assertNotNull(c.req(r2).granted, "readers share");
    long w = c.acquire("n3", Claim.write("rw", Claim.Writer.HARD, 0));
    assertNull(c.req(w).granted);
    c.release(r1);
    assertNull(c.req(w).granted, "one reader still holds");
    c.release(r2);
    assertNotNull(c.req(w).granted);
    long r3 = c.acquire("n1", Claim.read("rw"), true);
    assertEquals(Output.Failure.CONTENDED, c.req(r3).failed.failure(), "no reader while a writer holds");
  }

  @Test
  void aHardWriterKeepsItsPlaceAheadOfLaterReaders() {
    BakeryCluster c = cluster();
    long r1 = c.acquire("n1", Claim.read("rw"));
    long w = c.acquire("n2", Claim.write("rw", Claim.Writer.HARD, 0));
    assertNotNull(c.req(r1).granted);
    assertNull(c.req(w).granted, "the writer waits for the reader");
    long tryRead = c.acquire("n3", Claim.read("rw"), true);
    assertEquals(Output.Failure.CONTENDED, c.req(tryRead).failed.failure(), "tryAcquire(ZERO) fails behind W");
    long r2 = c.acquire("n3", Claim.read("rw"));
    assertNull(c.req(r2).granted, "a later reader waits behind the hard writer");
    c.advance(5 * MS);
    c.release(r1);
    assertNotNull(c.req(w).granted, "W is granted when R1 releases");
    assertNull(c.req(r2).granted);
    c.advance(5 * MS);
    c.release(w);
    assertNotNull(c.req(r2).granted, "R2 reads after W released");
  }

  @Test
  void aSoftWriterLetsLaterReadersInAndWaitsForNoReader() {
    BakeryCluster c = cluster();
    long r1 = c.acquire("n1", Claim.read("rw"));
    long w = c.acquire("n2", Claim.write("rw", Claim.Writer.SOFT, 0));
    long r2 = c.acquire("n3", Claim.read("rw"));
    assertNotNull(c.req(r1).granted);
    assertNull(c.req(w).granted);
    assertNotNull(c.req(r2).granted, "a later reader is granted at once while the soft writer waits");
    c.advance(5 * MS);
    c.release(r1);
    assertNull(c.req(w).granted, "R2 still reads");
    c.advance(5 * MS);
    c.release(r2);
    assertNotNull(c.req(w).granted, "granted once no reader holds or waits");
    assertTrue(c.req(w).granted.fencingToken() > c.req(r2).granted.fencingToken(), "F2/F3");
  }

  @Test
  void aTimedSoftWriterWaitsForAQuietPeriodSinceTheLastReaderGrant() {
    BakeryCluster c = cluster();
    long quiet = 60 * MS;
    long r1 = c.acquire("n1", Claim.read("rw"));
    long t1 = c.req(r1).grantedAt;
    c.advance(5 * MS);
    long w = c.acquire("n2", Claim.write("rw", Claim.Writer.TIMED_SOFT, quiet));
    c.advance(15 * MS);
    c.release(r1);
    assertNull(c.req(w).granted, "no reader holds, but the quiet period runs");
    c.advanceTo(t1 + quiet - 1);
    assertNull(c.req(w).granted, "not before Q after the last reader was granted");
    c.advanceTo(t1 + quiet);
    assertNotNull(c.req(w).granted, "granted when the quiet period ends");
    assertEquals(t1 + quiet, c.req(w).grantedAt);
    c.release(w);

    // a reader granted meanwhile restarts the wait
    long r2 = c.acquire("n1", Claim.read("rw"));
    long w2 = c.acquire("n2", Claim.write("rw", Claim.Writer.TIMED_SOFT, quiet));
    c.advance(20 * MS);
    c.release(r2);
    c.advance(20 * MS);
    long r3 = c.acquire("n3", Claim.read("rw"));
    long t3 = c.req(r3).grantedAt;
    assertNotNull(c.req(r3).granted, "a later reader gets in while the timed-soft writer waits");
    c.advance(5 * MS);
    c.release(r3);
    c.advanceTo(t3 + quiet - 1);
    assertNull(c.req(w2).granted, "the new reader restarted the quiet period");
    c.advanceTo(t3 + quiet);
    assertNotNull(c.req(w2).granted);
  }

  /**
   * Two timed-soft writers, the first in line with the longer quiet period: when the shorter one ends, neither
   * may go (the second waits for the first), and the first still needs a wake-up when its own period ends.
   * Sim seed 796252: only the earliest end was ever scheduled, and the first writer waited for ever.
   */
  @Test
  void aTimedSoftWriterWithTheLongerQuietPeriodIsWokenWhenItEnds() {
    BakeryCluster c = cluster();
    long r = c.acquire("n1", Claim.read("rw"));
    long t = c.req(r).grantedAt;
    long first = c.acquire("n2", Claim.write("rw", Claim.Writer.TIMED_SOFT, 60 * MS));
    long second = c.acquire("n3", Claim.write("rw", Claim.Writer.TIMED_SOFT, 40 * MS));
    c.advance(5 * MS);
    c.release(r);
    c.advanceTo(t + 40 * MS);
    assertNull(c.req(first).granted, "the first writer's quiet period runs on");
    assertNull(c.req(second).granted, "the second writer waits for the first");
    c.advanceTo(t + 60 * MS);
    assertNotNull(c.req(first).granted, "woken when its own quiet period ends");
    assertEquals(t + 60 * MS, c.req(first).grantedAt);
    assertNull(c.req(second).granted);
    c.release(first);
    assertNotNull(c.req(second).granted, "no reader since: the second follows at once");
  }
}
