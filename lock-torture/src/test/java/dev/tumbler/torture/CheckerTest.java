package dev.tumbler.torture;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tumbler.torture.Event.Type;
import dev.tumbler.torture.Violation.Kind;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The checker on known-bad and known-good histories, one class at a time: each violation class is found where it is,
 * attributed to the right fault and promise, and not found where the history only looks like it (a handover, a
 * paused or killed holder, a bystander's fault).
 */
class CheckerTest {

  private static List<Violation> of(Checker.Analysis a, Kind k) {
    return a.of(k);
  }

  @Test
  void aCleanHandoverIsNoViolation() {
    Checker.Analysis a = new Histories()
        .invoke("c1", "n0").grant("c1", "n0", 10, 1).write("c1", "n0", 10, 1).write("c1", "n0", 10, 1)
        .invoke("c2", "n0").release("c1", "n0", 10, 1)
        .grant("c2", "n0", 11, 1).write("c2", "n0", 11, 1).release("c2", "n0", 11, 1)
        .check();
    assertEquals(List.of(), a.violations());
    assertEquals(3, a.counts().get("writes"));
    assertEquals(0, a.staleWrites());
  }

  @Test
  void interleavedWritesThatTheRegisterAcceptedAreASafetyViolation() {
    // two grants with one token: the register accepts both, interleaved
    Checker.Analysis a = new Histories()
        .grant("c1", "n0", 7, 1).write("c1", "n0", 7, 1)
        .grant("c2", "n0", 7, 1).write("c2", "n0", 7, 1)
        .write("c1", "n0", 7, 1)
        .release("c1", "n0", 7, 1).release("c2", "n0", 7, 1)
        .check();
    List<Violation> safety = of(a, Kind.SAFETY);
    assertEquals(1, safety.size(), a.violations().toString());
    assertTrue(safety.getFirst().promised());
    assertEquals("FENCING", safety.getFirst().promise());
    assertTrue(safety.getFirst().summary().contains("c1's lease #1"), safety.getFirst().summary());
    assertEquals(1, of(a, Kind.LEASE_EXCLUSION).size());
    assertEquals(1, of(a, Kind.TOKEN_ORDER).size(), "an equal token is not strictly larger");
  }

  @Test
  void aStaleWriteTheRegisterRejectedIsCountedNotAViolation() {
    Checker.Analysis a = new Histories()
        .grant("c1", "n0", 7, 1).write("c1", "n0", 7, 1)
        .faultStart("partition", 1, "c1")
        .lost("c1", "n0", 7, 1)
        .grant("c2", "n0", 8, 1).write("c2", "n0", 8, 1)
        .stale("c1", "n0", 7, 1, 8)
        .faultEnd("partition", 1, "c1")
        .release("c1", "n0", 7, 1).release("c2", "n0", 8, 1)
        .check();
    assertEquals(List.of(), a.violations());
    assertEquals(1, a.staleWrites());
  }

  @Test
  void aGrantWhileAnotherLeaseIsValidIsALeaseExclusionViolation() {
    Checker.Analysis a = new Histories()
        .grant("c1", "n0", 7, 1)
        .faultStart("pause", 1, "c3").faultEnd("pause", 1, "c3")
        .grant("c2", "n0", 8, 1)
        .release("c1", "n0", 7, 1).release("c2", "n0", 8, 1)
        .check();
    List<Violation> v = of(a, Kind.LEASE_EXCLUSION);
    assertEquals(1, v.size());
    assertTrue(v.getFirst().promised());
    assertEquals(List.of(), v.getFirst().causes(), "a pause of a bystander is not a cause");
    assertTrue(v.getFirst().promise().contains("no fault in the window"), v.getFirst().promise());
    assertTrue(v.getFirst().summary().contains("ended later") && v.getFirst().summary().contains("(released)"),
        v.getFirst().summary());
    assertEquals(List.of(), of(a, Kind.LOST_NOTIFICATION), "the old holder never lost it: it released it late");
  }

  @Test
  void aServerFaultMakesALeaseExclusionViolationAPromiseOnlyForAFaultTolerantProvider() {
    String notTolerant = "provider=test;capabilities=MUTEX,FENCING,LEASE_EXPIRY,LOST_NOTIFICATION";
    Histories h = new Histories(notTolerant)
        .grant("c1", "n0", 7, 1)
        .faultStart("restart", 1, "redis-1").faultEnd("restart", 1, "redis-1")
        .grant("c2", "n0", 8, 1).write("c2", "n0", 8, 1)
        .lost("c1", "n0", 7, 1).release("c1", "n0", 7, 1).release("c2", "n0", 8, 1);
    Checker.Analysis a = h.check();
    Violation v = of(a, Kind.LEASE_EXCLUSION).getFirst();
    assertFalse(v.promised());
    assertEquals(List.of("restart #1 on redis-1"), v.causes());
    assertTrue(v.promise().startsWith("FAULT_TOLERANT not declared"), v.promise());
    Violation lost = of(a, Kind.LOST_NOTIFICATION).getFirst();
    assertFalse(lost.promised());
    assertEquals(0, a.promisedSafetyViolations());

    Checker.Analysis tolerant = new Histories()
        .grant("c1", "n0", 7, 1)
        .faultStart("restart", 1, "redis-1").faultEnd("restart", 1, "redis-1")
        .grant("c2", "n0", 8, 1).write("c2", "n0", 8, 1)
        .lost("c1", "n0", 7, 1).release("c1", "n0", 7, 1).release("c2", "n0", 8, 1)
        .check();
    assertTrue(of(tolerant, Kind.LEASE_EXCLUSION).getFirst().promised());
    assertEquals(2, tolerant.promisedSafetyViolations());
  }

  @Test
  void aServerFaultWhileAnAcquireWaitedOrShortlyBeforeIsAmongTheCauses() {
    String notTolerant = "provider=test;capabilities=MUTEX,FENCING,LEASE_EXPIRY,LOST_NOTIFICATION";
    long allowance = Histories.RUN.allowanceMillis();
    // a primary paused while two acquires wait: the sentinels fail it over, it resumes and grants what it had queued
    Checker.Analysis waited = new Histories(notTolerant)
        .at(1000).faultStart("pause-server", 1, "redis-1")
        .at(2000).invoke("c1", "n0").invoke("c2", "n0")
        .at(4000).faultEnd("pause-server", 1, "redis-1")
        .at(4020).grant("c1", "n0", 7, 1).grant("c2", "n0", 8, 1).lost("c1", "n0", 7, 1)
        .release("c2", "n0", 8, 1)
        .check();
    Violation v = of(waited, Kind.LEASE_EXCLUSION).getFirst();
    assertEquals(List.of("pause-server #1 on redis-1"), v.causes());
    assertFalse(v.promised());

    // both acquires invoked after the fault healed, while the backend still settles: still a cause
    Checker.Analysis settling = new Histories(notTolerant)
        .at(1000).faultStart("failover", 1, "redis-1")
        .at(3000).faultEnd("failover", 1, "redis-1")
        .at(3000 + allowance - 10).invoke("c1", "n0").invoke("c2", "n0").grant("c1", "n0", 7, 1)
        .grant("c2", "n0", 8, 1).lost("c1", "n0", 7, 1).release("c2", "n0", 8, 1)
        .check();
    assertFalse(of(settling, Kind.LEASE_EXCLUSION).getFirst().promised());

    // long after it: no fault in the window, and the provider promises exclusion
    Checker.Analysis later = new Histories(notTolerant)
        .at(1000).faultStart("failover", 1, "redis-1")
        .at(3000).faultEnd("failover", 1, "redis-1")
        .at(3000 + allowance + 10).invoke("c1", "n0").invoke("c2", "n0").grant("c1", "n0", 7, 1)
        .grant("c2", "n0", 8, 1).lost("c1", "n0", 7, 1).release("c2", "n0", 8, 1)
        .check();
    Violation late = of(later, Kind.LEASE_EXCLUSION).getFirst();
    assertEquals(List.of(), late.causes());
    assertTrue(late.promised());
  }

  @Test
  void theNewHoldersWriteBeforeTheOldHolderHeardItLostIsALostNotificationViolation() {
    Checker.Analysis a = new Histories()
        .grant("c1", "n0", 7, 1)
        .faultStart("partition", 1, "c1")
        .grant("c2", "n0", 8, 1).write("c2", "n0", 8, 1)
        .lost("c1", "n0", 7, 1)
        .faultEnd("partition", 1, "c1")
        .release("c1", "n0", 7, 1).release("c2", "n0", 8, 1)
        .check();
    List<Violation> v = of(a, Kind.LOST_NOTIFICATION);
    assertEquals(1, v.size(), a.violations().toString());
    assertTrue(v.getFirst().promised());
    assertEquals("LOST_NOTIFICATION", v.getFirst().promise());
    assertEquals(List.of("partition #1 on c1"), v.getFirst().causes());
    assertEquals(1, of(a, Kind.LEASE_EXCLUSION).size());
  }

  @Test
  void aLossHeardAfterTheNewGrantButBeforeItsFirstWriteIsNoLostNotificationViolation() {
    Checker.Analysis a = new Histories()
        .grant("c1", "n0", 7, 1)
        .faultStart("partition", 1, "c1")
        .grant("c2", "n0", 8, 1)
        .lost("c1", "n0", 7, 1)
        .write("c2", "n0", 8, 1)
        .faultEnd("partition", 1, "c1")
        .release("c1", "n0", 7, 1).release("c2", "n0", 8, 1)
        .check();
    assertEquals(List.of(), of(a, Kind.LOST_NOTIFICATION));
    assertEquals(1, of(a, Kind.LEASE_EXCLUSION).size());
  }

  @Test
  void aPausedHolderWhoseLossArrivesAsItWakesIsNoViolation() {
    Checker.Analysis a = new Histories()
        .at(1000).grant("c1", "n0", 7, 1).write("c1", "n0", 7, 1)
        .faultStart("pause", 1, "c1")
        .at(3000).grant("c2", "n0", 8, 1).write("c2", "n0", 8, 1)
        .at(4000).faultEnd("pause", 1, "c1")
        .at(4100).stale("c1", "n0", 7, 1, 8).lost("c1", "n0", 7, 1).release("c1", "n0", 7, 1)
        .release("c2", "n0", 8, 1)
        .check();
    assertEquals(List.of(), a.violations());
    Checker.Lease paused = a.leases().getFirst();
    assertTrue(paused.endedInPause());
  }

  @Test
  void aPausedHolderThatReleasesAsItWakesIsNoViolation() {
    // it reached its release before its renewer noticed the loss: no lost event, a release on waking
    Checker.Analysis a = new Histories()
        .at(1000).grant("c1", "n0", 7, 1).write("c1", "n0", 7, 1)
        .faultStart("pause", 1, "c1")
        .at(3000).grant("c2", "n0", 8, 1).write("c2", "n0", 8, 1)
        .at(4000).faultEnd("pause", 1, "c1")
        .at(4010).release("c1", "n0", 7, 1)
        .release("c2", "n0", 8, 1)
        .check();
    assertEquals(List.of(), a.violations());
  }

  @Test
  void aPausedHolderThatStaysSilentPastTheWakeSlackIsAViolation() {
    Checker.Analysis a = new Histories()
        .at(1000).grant("c1", "n0", 7, 1)
        .faultStart("pause", 1, "c1")
        .at(3000).grant("c2", "n0", 8, 1).write("c2", "n0", 8, 1)
        .at(4000).faultEnd("pause", 1, "c1")
        .at(4000 + Histories.RUN.wakeSlackMillis() + 1).lost("c1", "n0", 7, 1).release("c1", "n0", 7, 1)
        .release("c2", "n0", 8, 1)
        .check();
    assertEquals(1, of(a, Kind.LEASE_EXCLUSION).size());
    assertEquals(1, of(a, Kind.LOST_NOTIFICATION).size());
  }

  @Test
  void aGrantReportedOnlyAsItsPausedClientWakesIsNotJudgedForItsTokenOrder() {
    Checker.Analysis a = new Histories()
        .at(900).invoke("c1", "n0")
        .at(1000).faultStart("pause", 1, "c1")
        .at(2000).grant("c2", "n0", 8, 1).write("c2", "n0", 8, 1).release("c2", "n0", 8, 1)
        .at(3000).faultEnd("pause", 1, "c1")
        .at(3050).grant("c1", "n0", 7, 1).lost("c1", "n0", 7, 1).release("c1", "n0", 7, 1)
        .check();
    assertEquals(List.of(), a.violations());
  }

  /**
   * The nemesis records a pause's start, then runs {@code kill -STOP}, which takes effect some time later (seen: 150 ms
   * on a loaded machine, KnownAnswerTortureTest in a soak run): the client invoked an acquire after the recorded start,
   * was stopped in its wait, and reported the grant it had been given before, and its loss, only on waking, while
   * another client held the name by then. Granted before the stop and run out in it, that lease is judged neither for
   * exclusion nor for its token.
   */
  @Test
  void aGrantReportedOnWakingForAnAcquireInvokedBeforeTheStopTookEffectIsNoViolation() {
    Checker.Analysis a = new Histories()
        .at(1000).faultStart("pause", 1, "c1")
        .at(1100).invoke("c1", "n0")
        .at(3000).faultEnd("pause", 1, "c1")
        .at(3050).grant("c2", "n0", 8, 1)
        .at(3100).grant("c1", "n0", 7, 1)
        .at(3150).lost("c1", "n0", 7, 1).release("c1", "n0", 7, 1)
        .at(4000).write("c2", "n0", 8, 1).release("c2", "n0", 8, 1)
        .check();
    assertEquals(List.of(), a.violations());
  }

  @Test
  void aKilledHoldersLeaseEndsWithTheKill() {
    Checker.Analysis a = new Histories()
        .grant("c1", "n0", 7, 1).write("c1", "n0", 7, 1)
        .faultStart("kill", 1, "c1").faultEnd("kill", 1, "c1")
        .exit("c1")
        .grant("c2", "n0", 8, 1).write("c2", "n0", 8, 1).release("c2", "n0", 8, 1)
        .check();
    assertEquals(List.of(), a.violations());
    assertEquals("killed", a.leases().getFirst().how());
  }

  @Test
  void aTokenNotAboveThePreviousGrantsIsATokenOrderViolation() {
    Checker.Analysis a = new Histories()
        .grant("c1", "n0", 7, 1).release("c1", "n0", 7, 1)
        .grant("c2", "n0", 8, 1).release("c2", "n0", 8, 1)
        .grant("c1", "n0", 3, 2).release("c1", "n0", 3, 2)
        .grant("c2", "n0", 4, 2).release("c2", "n0", 4, 2)
        .grant("c1", "n1", 1, 3).release("c1", "n1", 1, 3)
        .check();
    List<Violation> v = of(a, Kind.TOKEN_ORDER);
    assertEquals(1, v.size(), "one break of the order (8, then 3), not one per grant below the highest: " + v);
    assertTrue(v.getFirst().promised());

    Checker.Analysis noFencing = new Histories("provider=test;capabilities=MUTEX")
        .grant("c1", "n0", 7, 1).release("c1", "n0", 7, 1)
        .grant("c2", "n0", 3, 1).release("c2", "n0", 3, 1)
        .check();
    assertFalse(of(noFencing, Kind.TOKEN_ORDER).getFirst().promised());
    assertEquals("FENCING not declared", of(noFencing, Kind.TOKEN_ORDER).getFirst().promise());
  }

  /**
   * Seen in a five-minute run on {@code redis-cluster}: a paused master resumed after its failover and granted the
   * acquire it had queued, while the promoted replica granted another, 71 us apart by the servers' clocks; the older
   * grant (the lower, clock-floored token) reached the register second. That is a lease exclusion a provider without
   * {@code FAULT_TOLERANT} does not promise, and the tokens follow the servers' decisions: not a break of FENCING. The
   * same pair of grants without the server fault, or on a fault-tolerant provider, is one.
   */
  @Test
  void overlappingGrantsOfAFailoverAreNoTokenOrderPromiseWhereTheirOverlapIsNone() {
    String notTolerant = "provider=test;capabilities=MUTEX,FENCING,LEASE_EXPIRY,LOST_NOTIFICATION";
    Checker.Analysis failover = new Histories(notTolerant)
        .faultStart("pause-server", 1, "master-3")
        .grant("c3", "n2", 744_626, 1).grant("c2", "n2", 744_555, 1)
        .faultEnd("pause-server", 1, "master-3")
        .release("c3", "n2", 744_626, 1).release("c2", "n2", 744_555, 1)
        .check();
    Violation v = of(failover, Kind.TOKEN_ORDER).getFirst();
    assertFalse(v.promised(), v.promise() + " / " + failover.violations());
    assertTrue(v.promise().startsWith("not an order: the two grants overlapped"), v.promise());
    assertEquals(0, failover.promisedSafetyViolations());

    Checker.Analysis tolerant = new Histories()
        .faultStart("pause-server", 1, "master-3")
        .grant("c3", "n2", 744_626, 1).grant("c2", "n2", 744_555, 1)
        .faultEnd("pause-server", 1, "master-3")
        .release("c3", "n2", 744_626, 1).release("c2", "n2", 744_555, 1)
        .check();
    assertTrue(of(tolerant, Kind.TOKEN_ORDER).getFirst().promised());

    Checker.Analysis noFault = new Histories(notTolerant)
        .grant("c3", "n2", 744_626, 1).grant("c2", "n2", 744_555, 1)
        .release("c3", "n2", 744_626, 1).release("c2", "n2", 744_555, 1)
        .check();
    assertTrue(of(noFault, Kind.TOKEN_ORDER).getFirst().promised(), "without a fault the overlap is promised, and so "
        + "is the order");

    Checker.Analysis sequential = new Histories(notTolerant)
        .faultStart("pause-server", 1, "master-3")
        .grant("c3", "n2", 744_626, 1).release("c3", "n2", 744_626, 1)
        .grant("c2", "n2", 744_555, 1).release("c2", "n2", 744_555, 1)
        .faultEnd("pause-server", 1, "master-3")
        .check();
    assertTrue(of(sequential, Kind.TOKEN_ORDER).getFirst().promised(), "a grant after the earlier lease ended must "
        + "have the larger token, fault or not");
  }

  @Test
  void aWaitPastItsBoundAndTheSlackIsAWaitBoundViolation() {
    long bound = Histories.RUN.maxWaitMillis() + Histories.RUN.waitSlackMillis();
    Checker.Analysis a = new Histories()
        .invoke("c1", "n0").completed(Type.TIMEOUT, "c1", "n0", bound + 1)
        .invoke("c2", "n0").completed(Type.TIMEOUT, "c2", "n0", bound)
        .invoke("c3", "n1").completed(Type.FAIL, "c3", "n1", bound + 500)
        .check();
    List<Violation> v = of(a, Kind.WAIT_BOUND);
    assertEquals(2, v.size(), v.toString());
    assertTrue(v.stream().allMatch(Violation::promised));
  }

  @Test
  void aWaitThatSpannedItsClientsPauseIsNoViolation() {
    Checker.Analysis a = new Histories()
        .invoke("c1", "n0").faultStart("pause", 1, "c1").faultEnd("pause", 1, "c1")
        .completed(Type.TIMEOUT, "c1", "n0", 9000)
        .check();
    assertEquals(List.of(), a.violations());
  }

  @Test
  void aWaitThatNeverReturnedIsAViolationUnlessItsClientWasKilled() {
    Checker.Analysis a = new Histories()
        .at(1000).invoke("c1", "n0").invoke("c2", "n0")
        .at(2000).faultStart("kill", 1, "c2").faultEnd("kill", 1, "c2").exit("c2")
        .at(10_000).exit("c1")
        .check();
    List<Violation> v = of(a, Kind.WAIT_BOUND);
    assertEquals(1, v.size(), v.toString());
    assertTrue(v.getFirst().summary().startsWith("c1's acquire of n0 invoked"), v.getFirst().summary());
  }

  @Test
  void aNameAskedForAndNotGrantedWithinTheRecoveryBoundAfterAFaultHealedIsARecoveryViolation() {
    long bound = Histories.RUN.recoveryMillis();
    Checker.Analysis late = new Histories()
        .at(1000).faultStart("partition", 1, "c3")
        .at(3000).faultEnd("partition", 1, "c3")
        .at(3100).invoke("c1", "n0").completed(Type.TIMEOUT, "c1", "n0", 2000)
        .at(3100 + bound + 1).grant("c2", "n0", 5, 1).release("c2", "n0", 5, 1)
        .at(3100 + bound + 10).bye("c1")
        .check();
    List<Violation> v = of(late, Kind.RECOVERY);
    assertEquals(1, v.size(), late.violations().toString());
    assertEquals(List.of("partition #1 on c3"), v.getFirst().causes());

    Checker.Analysis never = new Histories()
        .at(1000).faultStart("restart", 1, "redis-1")
        .at(3000).faultEnd("restart", 1, "redis-1")
        .at(3100).invoke("c1", "n1")
        .at(3000 + bound + 2000).bye("c1")
        .check();
    assertEquals(1, of(never, Kind.RECOVERY).size(), never.violations().toString());

    Checker.Analysis inTime = new Histories()
        .at(1000).faultStart("partition", 1, "c3")
        .at(3000).faultEnd("partition", 1, "c3")
        .at(3100).invoke("c1", "n0")
        .at(3100 + bound - 1).grant("c1", "n0", 5, 1).release("c1", "n0", 5, 1)
        .at(3100 + bound + 10).bye("c1")
        .check();
    assertEquals(List.of(), inTime.violations());

    Checker.Analysis nobodyAsked = new Histories()
        .at(1000).faultStart("partition", 1, "c3")
        .at(3000).faultEnd("partition", 1, "c3")
        .at(3000 + bound + 2000).bye("c1")
        .check();
    assertEquals(List.of(), nobodyAsked.violations());
  }

  @Test
  void aHistoryRoundTripsThroughItsFile() throws Exception {
    Histories h = new Histories().grant("c1", "n\"0", 7, 1).lost("c1", "n\"0", 7, 1).faultStart("pause", 1, "c1");
    java.nio.file.Path file = java.nio.file.Files.createTempFile("history", ".jsonl");
    try (History out = new History(file)) {
      for (Event e : h.events()) {
        out.append(e);
      }
    }
    assertEquals(h.events(), History.read(file));
    assertEquals(Histories.RUN, RunParameters.parse(h.events().getFirst().detail()));
    java.nio.file.Files.delete(file);
  }

  @Test
  void theReportShowsEveryClassAndEscapesWhatItQuotes() {
    Checker.Analysis a = new Histories()
        .grant("c1", "<n0>", 7, 1).write("c1", "<n0>", 7, 1)
        .grant("c2", "<n0>", 7, 1).write("c2", "<n0>", 7, 1).write("c1", "<n0>", 7, 1)
        .release("c1", "<n0>", 7, 1).release("c2", "<n0>", 7, 1)
        .check();
    String html = Report.html(a);
    assertTrue(html.contains("<svg"), "a timeline");
    assertTrue(html.contains("&lt;n0&gt;") && !html.contains("<n0>"), "names are escaped");
    for (Kind k : Kind.values()) {
      assertTrue(html.contains("id=\"" + k.label() + "\""), k.label());
    }
    String text = Report.summary(a);
    assertTrue(text.contains("verdict: FAILED"), text);
  }
}
