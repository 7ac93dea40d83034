package dev.tumbler.integration;

import dev.tumbler.lock.LeaderElection;
import dev.tumbler.lock.Lease;
import dev.tumbler.lock.LockService;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.context.ApplicationEventPublisherAware;
import org.springframework.context.SmartLifecycle;
import org.springframework.integration.leader.Candidate;
import org.springframework.integration.leader.Context;
import org.springframework.integration.leader.DefaultCandidate;
import org.springframework.integration.leader.event.DefaultLeaderEventPublisher;
import org.springframework.integration.leader.event.LeaderEventPublisher;

/**
 * Spring Integration leadership from a Tumbler {@link LeaderElection}: the {@link Candidate} of this instance takes
 * part in the election named by its role, is told {@code onGranted}/{@code onRevoked}, and the
 * {@code OnGrantedEvent}/{@code OnRevokedEvent} it publishes start and stop the endpoints of that role (Spring
 * Integration's {@code SmartLifecycleRoleController}, as with its own {@code LockRegistryLeaderInitiator}).
 *
 * <pre>{@code
 * @Bean
 * TumblerLeaderInitiator leader(LockService locks) {
 *   return new TumblerLeaderInitiator(locks, new DefaultCandidate(instanceId, "cluster"));
 * }
 * }</pre>
 *
 * <p>Where {@code LockRegistryLeaderInitiator} polls a lock (a busy wait, a heartbeat that re-takes it), the election
 * is the backend's: a leader keeps leadership while its lease is renewed and loses it within one lease term of its
 * process dying or being cut off; the others are woken when it ends. Leadership is a {@link Lease}: its fencing token
 * ({@link #leadership()}) tells a resource which leader is the latest. A lease lost under a live leader (a partition
 * longer than the term) revokes it at once ({@code onRevoked}, {@code OnRevokedEvent}); the candidate stays in the
 * election and may be elected again. {@link Context#yield()} gives leadership up and joins again, behind the others
 * that wait.
 *
 * <p>The candidate's callbacks and the events run on one thread of the initiator's, in the order leadership changed,
 * never two at once; a revocation is told only after its grant. A leader that steps down on purpose ({@link #stop()}
 * as its context closes, {@code yield()}) is told first and resigns after (waiting up to 10 s for its
 * {@code onRevoked}): its endpoints are stopped before another instance can be elected. A leader whose lease was lost
 * is told after the fact, as it can only be. Thread safe.
 */
public final class TumblerLeaderInitiator implements SmartLifecycle, ApplicationEventPublisherAware {
  private static final Logger LOG = LoggerFactory.getLogger(TumblerLeaderInitiator.class);

  private final LockService service;
  private final Candidate candidate;
  private final Context context = new LeaderContext();
  private final Object lifecycle = new Object();
  private LeaderEventPublisher publisher;
  private boolean autoStartup = true;
  private int phase = Integer.MAX_VALUE - 1000; // as LockRegistryLeaderInitiator: stopped before its endpoints
  // guarded by lifecycle
  private Membership membership;
  private Teller teller;

  /** One joining of the election; inactive once left, when a late grant of it must not be told. */
  private static final class Membership {
    final LeaderElection election;
    volatile boolean active = true;

    Membership(LeaderElection election) {
      this.election = election;
    }
  }

  /**
   * The thread that tells the candidate, one per {@link #start()}: what it was told last is its own, so a teller
   * still finishing an {@code onRevoked} after a stop cannot confuse the next start's.
   */
  private final class Teller {
    final ExecutorService executor;
    volatile Thread thread;
    private boolean told; // on the teller's thread only

    Teller() {
      java.util.concurrent.ThreadFactory threads = Thread.ofPlatform().daemon()
          .name("tumbler-leader-" + candidate.getRole()).factory();
      executor = Executors.newSingleThreadExecutor(r -> {
        Thread t = threads.newThread(r);
        thread = t;
        return t;
      });
    }

    /** Tells the candidate and the publisher, once per change. On the teller's thread. */
    void changed(boolean leader) {
      if (leader == told) {
        return;
      }
      told = leader;
      try {
        if (leader) {
          candidate.onGranted(context);
          if (publisher != null) {
            publisher.publishOnGranted(TumblerLeaderInitiator.this, context, candidate.getRole());
          }
        } else {
          candidate.onRevoked(context);
          if (publisher != null) {
            publisher.publishOnRevoked(TumblerLeaderInitiator.this, context, candidate.getRole());
          }
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      } catch (RuntimeException e) {
        LOG.warn("leader initiator of role '{}': telling the candidate {} failed", candidate.getRole(),
            leader ? "onGranted" : "onRevoked", e);
      }
    }

    /**
     * Tells the candidate it is no longer leader, then runs {@code after} (the resignation). From another thread:
     * waits up to 10 s for the candidate's {@code onRevoked} (uninterruptibly: a resignation before it would let the
     * next leader start beside this one's endpoints), then runs {@code after} itself. From the teller's own thread
     * (a {@code yield()} or {@code stop()} inside {@code onGranted} or an event listener): queues both behind what it
     * is telling now, so that its grant is published before its revocation.
     */
    void revokeThen(Runnable after) {
      if (Thread.currentThread() == thread) {
        executor.execute(() -> {
          changed(false);
          after.run();
        });
        return;
      }
      java.util.concurrent.Future<?> told;
      try {
        told = executor.submit(() -> changed(false));
      } catch (RejectedExecutionException e) {
        after.run();
        return;
      }
      long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      boolean interrupted = false;
      try {
        while (true) {
          try {
            told.get(Math.max(0, until - System.nanoTime()), TimeUnit.NANOSECONDS);
            break;
          } catch (InterruptedException e) {
            interrupted = true;
          } catch (TimeoutException e) {
            LOG.warn("leader initiator of role '{}': the candidate's onRevoked did not return within 10 s; "
                + "resigning anyway", candidate.getRole());
            break;
          } catch (ExecutionException e) {
            LOG.warn("leader initiator of role '{}': telling the revocation failed", candidate.getRole(), e);
            break;
          }
        }
      } finally {
        if (interrupted) {
          Thread.currentThread().interrupt();
        }
      }
      after.run();
    }
  }

  /** A candidate for {@code role}, with a {@link DefaultCandidate} of a random id. */
  public TumblerLeaderInitiator(LockService service, String role) {
    this(service, new DefaultCandidate(java.util.UUID.randomUUID().toString(), role));
  }

  /** {@code candidate} in the election of its role on {@code service} (which stays the caller's to close). */
  public TumblerLeaderInitiator(LockService service, Candidate candidate) {
    this.service = Objects.requireNonNull(service, "service");
    this.candidate = Objects.requireNonNull(candidate, "candidate");
    Objects.requireNonNull(candidate.getRole(), "candidate.getRole()");
  }

  /** Where the granted and revoked events go; by default the application context's events. */
  public void setLeaderEventPublisher(LeaderEventPublisher publisher) {
    this.publisher = publisher;
  }

  @Override
  public void setApplicationEventPublisher(ApplicationEventPublisher events) {
    if (publisher == null) {
      publisher = new DefaultLeaderEventPublisher(events);
    }
  }

  public void setAutoStartup(boolean autoStartup) {
    this.autoStartup = autoStartup;
  }

  @Override
  public boolean isAutoStartup() {
    return autoStartup;
  }

  public void setPhase(int phase) {
    this.phase = phase;
  }

  @Override
  public int getPhase() {
    return phase;
  }

  /** The context the candidate is told with: whether it is leader now, and {@code yield()}. */
  public Context getContext() {
    return context;
  }

  /** The lease of the current leadership while this instance is leader: its fencing token, validity. */
  public Optional<Lease> leadership() {
    Membership m;
    synchronized (lifecycle) {
      m = membership;
    }
    return m == null || !m.active ? Optional.empty() : m.election.leadership();
  }

  /** Joins the election of the candidate's role. */
  @Override
  public void start() {
    synchronized (lifecycle) {
      if (membership != null) {
        return;
      }
      teller = new Teller();
      membership = join(teller);
    }
  }

  private Membership join(Teller tell) {
    LeaderElection e = service.election(candidate.getRole());
    Membership m = new Membership(e);
    e.onLeadershipChange(leader -> {
      try {
        tell.executor.execute(() -> {
          if (m.active) { // a membership left was told its end by whoever left it
            tell.changed(leader);
          }
        });
      } catch (RejectedExecutionException stopped) {
        // after stop(), which told the candidate itself
      }
    });
    e.join();
    return m;
  }

  /**
   * Tells the candidate it is no longer leader (its endpoints stop), waiting up to 10 s for that, then resigns: the
   * next leader is elected only after this one's endpoints were told to stop.
   */
  @Override
  public void stop() {
    Membership m;
    Teller tell;
    synchronized (lifecycle) {
      m = membership;
      if (m == null) {
        return;
      }
      m.active = false;
      membership = null;
      tell = teller;
      teller = null;
    }
    tell.revokeThen(m.election::close);
    tell.executor.shutdown();
  }

  @Override
  public boolean isRunning() {
    synchronized (lifecycle) {
      return membership != null;
    }
  }

  private final class LeaderContext implements Context {
    @Override
    public boolean isLeader() {
      Membership m;
      synchronized (lifecycle) {
        m = membership;
      }
      return m != null && m.active && m.election.isLeader();
    }

    /**
     * Gives leadership up, if held: the candidate is told it is revoked, then the election is left and joined again,
     * behind the candidates that wait.
     */
    @Override
    public void yield() {
      Membership m;
      Teller tell;
      synchronized (lifecycle) {
        m = membership;
        if (m == null || !m.active || !m.election.isLeader()) {
          return;
        }
        m.active = false;
        tell = teller;
      }
      tell.revokeThen(() -> {
        m.election.close();
        synchronized (lifecycle) {
          if (membership == m) {
            membership = join(tell);
          }
        }
      });
    }

    @Override
    public String getRole() {
      return candidate.getRole();
    }

    @Override
    public String toString() {
      return "TumblerLeaderInitiator.Context[role=" + candidate.getRole() + ", leader=" + isLeader() + "]";
    }
  }

  @Override
  public String toString() {
    return "TumblerLeaderInitiator[" + candidate + " on " + service.info().url() + "]";
  }
}
