package dev.tumbler.integration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tumbler.lock.Capability;
import dev.tumbler.lock.Lease;
import dev.tumbler.lock.LockProviders;
import dev.tumbler.lock.LockService;
import dev.tumbler.lock.spi.LeaseRenewer;
import java.time.Duration;
import java.util.List;
import java.util.Queue;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.integration.config.EnableIntegration;
import org.springframework.integration.dsl.IntegrationFlow;
import org.springframework.integration.dsl.Pollers;
import org.springframework.integration.leader.Context;
import org.springframework.integration.leader.DefaultCandidate;

/**
 * Two instances of one Spring Integration application, each with a polling endpoint in a role that its
 * {@link TumblerLeaderInitiator} controls (Spring Integration's own {@code SmartLifecycleRoleController} starts and
 * stops it on the leader events): on the embedded native node and on a real Redis, only the leader's endpoint polls,
 * and when the leader's context closes, it yields, or its lease is lost (renewals paused past the term), the other
 * instance takes over with a larger fencing token, every poll of the new leader after every poll of the old one as
 * leader, and the old one's endpoint stopped (before the new leader's first poll, unless its lease was lost).
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class LeaderInitiatorTest {
  /**
   * One poll of an instance's endpoint: {@code before} and {@code after} are read just before and just after it
   * asked its initiator whether it is leader ({@code leader}), with the leadership's token (-1 when not leader).
   */
  record Poll(String instance, long before, long after, boolean leader, long token) {}

  static final Queue<Poll> POLLS = new ConcurrentLinkedQueue<>();

  /** The application: a lock service, the initiator, and an endpoint in the role that polls every 10 ms. */
  @Configuration
  @EnableIntegration
  static class Instance {
    static final ThreadLocal<String[]> ARGS = new ThreadLocal<>();
    private final String url = ARGS.get()[0];
    private final String name = ARGS.get()[1];
    private final String role = ARGS.get()[2];

    @Bean(destroyMethod = "close")
    LockService lockService() {
      return LockProviders.connect(url);
    }

    @Bean
    TumblerLeaderInitiator leaderInitiator(LockService lockService) {
      // a candidate that takes a while to step down, as one that drains work does: a leader elected before the old
      // one was told would poll beside it meanwhile
      return new TumblerLeaderInitiator(lockService, new DefaultCandidate(name, role) {
        @Override
        public void onRevoked(Context context) {
          try {
            Thread.sleep(200);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
          super.onRevoked(context);
        }
      });
    }

    @Bean
    IntegrationFlow work(TumblerLeaderInitiator leaderInitiator) {
      return IntegrationFlow.fromSupplier(() -> name,
              e -> e.poller(Pollers.fixedDelay(Duration.ofMillis(10))).role(role).autoStartup(false))
          .handle(m -> {
            long before = System.nanoTime();
            boolean leader = leaderInitiator.getContext().isLeader();
            long after = System.nanoTime();
            long token = leaderInitiator.leadership().map(Lease::fencingToken).orElse(-1L);
            POLLS.add(new Poll(name, before, after, leader, token));
          })
          .get();
    }
  }

  private static AnnotationConfigApplicationContext instance(String url, String name, String role) {
    return TestBackends.context(Instance.class, Instance.ARGS, new String[] {url, name, role});
  }

  /** The embedded node with an algorithm that elects (the default, Lamport's, has no elections). */
  private static final String NATIVE = "lock:native:local?algorithm=lease&leaseTime=3s";
  /** Long enough that a loaded machine does not lose a lease by a stall between renewals. */
  private static final long LEASE_MILLIS = 3_000;

  /** How the leader ends. */
  enum End {
    /** Its context closes (its endpoints stop before the initiator, by their phases). */
    CLOSED,
    /** It yields ({@code Context.yield()}) while its context runs: told first, so its endpoint stops, then resigns. */
    YIELDED,
    /** Its renewals pause past its lease term: told once its lease is lost. */
    LEASE_LOST
  }

  @Test
  void onTheEmbeddedNativeNodeTheOtherTakesOverWhenTheLeaderStops() throws Exception {
    takeOver(NATIVE, End.CLOSED);
  }

  @Test
  void onTheEmbeddedNativeNodeTheOtherTakesOverWhenTheLeaderYields() throws Exception {
    takeOver(NATIVE, End.YIELDED);
  }

  @Test
  void onTheEmbeddedNativeNodeTheOtherTakesOverWhenTheLeadersLeaseIsLost() throws Exception {
    takeOver(NATIVE, End.LEASE_LOST);
  }

  @Test
  void onRedisTheOtherTakesOverWhenTheLeaderYields() throws Exception {
    takeOver("lock:redis://" + TestBackends.redisAddress() + "?leaseTime=3s", End.YIELDED);
  }

  @Test
  void onRedisTheOtherTakesOverWhenTheLeadersLeaseIsLost() throws Exception {
    takeOver("lock:redis://" + TestBackends.redisAddress() + "?leaseTime=3s", End.LEASE_LOST);
  }

  /**
   * {@code a} and {@code b} run; the one that polls is the leader; then it ends as {@code end} says; the other must
   * take over.
   */
  private void takeOver(String url, End end) throws Exception {
    boolean loseLease = end == End.LEASE_LOST;
    POLLS.clear();
    String role = "role-" + UUID.randomUUID();
    AnnotationConfigApplicationContext a = instance(url, "a", role);
    AnnotationConfigApplicationContext b = instance(url, "b", role);
    try {
      awaitPoll(p -> p.leader(), "no leader polled");
      Thread.sleep(500);
      List<Poll> steady = List.copyOf(POLLS);
      String first = steady.getFirst().instance();
      assertEquals(Set.of(first), steady.stream().map(Poll::instance).collect(Collectors.toSet()),
          "both instances polled while both ran: " + describe(steady));
      assertTrue(steady.stream().allMatch(p -> p.leader() && p.token() == steady.getFirst().token()),
          "a poll of the leader not as leader of one term: " + describe(steady));
      AnnotationConfigApplicationContext leader = first.equals("a") ? a : b;
      String other = first.equals("a") ? "b" : "a";
      switch (end) {
        case CLOSED -> leader.close();
        case YIELDED -> leader.getBean(TumblerLeaderInitiator.class).getContext().yield();
        case LEASE_LOST -> leader.getBean(LockService.class).unwrap(LeaseRenewer.class).pause();
      }
      awaitPoll(p -> p.instance().equals(other) && p.leader(), other + " did not take over: " + describe(POLLS));
      // long enough to see the old endpoint poll if it was left running: past the two terms the check below allows
      // when the lease was lost, half a second otherwise
      Thread.sleep(loseLease ? 2 * LEASE_MILLIS + 500 : 500);
      List<Poll> all = List.copyOf(POLLS);
      long lastOld = all.stream().filter(p -> p.instance().equals(first) && p.leader()).mapToLong(Poll::before).max()
          .orElseThrow();
      long firstNew = all.stream().filter(p -> p.instance().equals(other) && p.leader()).mapToLong(Poll::after).min()
          .orElseThrow();
      assertTrue(lastOld < firstNew, "the two leaders' polls overlap: " + describe(all));
      long oldToken = steady.getFirst().token();
      AnnotationConfigApplicationContext next = leader == a ? b : a;
      if (next.getBean(LockService.class).info().capabilities().contains(Capability.FENCING)) {
        assertTrue(all.stream().filter(p -> p.instance().equals(other) && p.leader()).allMatch(p -> p.token() > oldToken),
            "the new leader's token is not larger than " + oldToken + ": " + describe(all));
      }
      // the old leader's endpoint was stopped: within two lease terms of the other's first poll when its lease was
      // lost (it is told when its own view of the lease ends, about when the other is granted), before it when it
      // stopped
      long stoppedBy = firstNew + (loseLease ? TimeUnit.MILLISECONDS.toNanos(2 * LEASE_MILLIS) : 0);
      // (a poll as the leader of a later term is not the old endpoint left running: the old instance joined again)
      long newToken = all.stream().filter(p -> p.instance().equals(other) && p.leader()).mapToLong(Poll::token).min()
          .orElseThrow();
      assertFalse(all.stream().anyMatch(p -> p.instance().equals(first) && p.before() > stoppedBy
              && !(p.leader() && p.token() > newToken)), "the old leader's endpoint still polls: " + describe(all));
    } finally {
      b.close();
      a.close();
    }
  }

  private static void awaitPoll(Predicate<Poll> wanted, String failure) throws InterruptedException {
    long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
    while (POLLS.stream().noneMatch(wanted)) {
      if (System.nanoTime() > until) {
        throw new AssertionError(failure);
      }
      Thread.sleep(10);
    }
  }

  /** The polls as runs of one instance: "a#5(leader) x40, b#6(leader) x12". */
  private static String describe(java.util.Collection<Poll> polls) {
    StringBuilder b = new StringBuilder();
    Poll run = null;
    int n = 0;
    for (Poll p : polls) {
      if (run != null && run.instance().equals(p.instance()) && run.leader() == p.leader() && run.token() == p.token()) {
        n++;
        continue;
      }
      if (run != null) {
        b.append(run.instance()).append('#').append(run.token()).append(run.leader() ? "" : "(not leader)").append(" x")
            .append(n).append(", ");
      }
      run = p;
      n = 1;
    }
    if (run != null) {
      b.append(run.instance()).append('#').append(run.token()).append(run.leader() ? "" : "(not leader)").append(" x")
          .append(n);
    }
    return b.toString();
  }
}
