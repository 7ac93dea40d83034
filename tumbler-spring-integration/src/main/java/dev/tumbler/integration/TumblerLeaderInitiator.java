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
  private ExecutorService callbacks;
  private volatile Thread callbackThread;
  // on the callbacks thread only
  private boolean told;

  /** One joining of the election; inactive once left, when a late grant of it must not be told. */
  private static final class Membership {
    final LeaderElection election;
    volatile boolean active = true;

    Membership(LeaderElection election) {
      this.election = election;
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
      java.util.concurrent.ThreadFactory threads = Thread.ofPlatform().daemon()
          .name("tumbler-leader-" + candidate.getRole()).factory();
      callbacks = Executors.newSingleThreadExecutor(r -> {
        Thread t = threads.newThread(r);
        callbackThread = t;
        return t;
      });
      membership = join(callbacks);
    }
  }

  private Membership join(ExecutorService tell) {
    LeaderElection e = service.election(candidate.getRole());
    Membership m = new Membership(e);
    e.onLeadershipChange(leader -> {
      try {
        tell.execute(() -> {
          if (m.active) { // a membership left was told its end by whoever left it
            changed(leader);
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
   * Tells the candidate it is no longer leader (its endpoints stop), waits up to 10 s for that, then resigns: the
   * next leader is elected only after this one's endpoints were told to stop.
   */
  @Override
  public void stop() {
    Membership m;
    ExecutorService tell;
    synchronized (lifecycle) {
      m = membership;
      if (m == null) {
        return;
      }
      m.active = false;
      membership = null;
      tell = callbacks;
      callbacks = null;
    }
    revoke(tell);
    m.election.close();
    tell.shutdown();
  }

  @Override
  public boolean isRunning() {
    synchronized (lifecycle) {
      return membership != null;
    }
  }

  /** Tells the revocation on the callbacks thread and waits (up to 10 s) until it was told; at once on that thread. */
  private void revoke(ExecutorService tell) {
    if (Thread.currentThread() == callbackThread) {
      changed(false);
      return;
    }
    try {
      tell.submit(() -> changed(false)).get(10, TimeUnit.SECONDS);
    } catch (TimeoutException e) {
      LOG.warn("leader initiator of role '{}': the candidate's onRevoked did not return within 10 s; resigning anyway",
          candidate.getRole());
    } catch (ExecutionException | RejectedExecutionException e) {
      LOG.warn("leader initiator of role '{}': telling the revocation failed", candidate.getRole(), e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** On the callbacks thread: tells the candidate and the publisher, once per change. */
  private void changed(boolean leader) {
    if (leader == told) {
      return;
    }
    told = leader;
    try {
      if (leader) {
        candidate.onGranted(context);
        if (publisher != null) {
          publisher.publishOnGranted(this, context, candidate.getRole());
        }
      } else {
        candidate.onRevoked(context);
        if (publisher != null) {
          publisher.publishOnRevoked(this, context, candidate.getRole());
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (RuntimeException e) {
      LOG.warn("leader initiator of role '{}': telling the candidate {} failed", candidate.getRole(),
          leader ? "onGranted" : "onRevoked", e);
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
      ExecutorService tell;
      synchronized (lifecycle) {
        m = membership;
        if (m == null || !m.active || !m.election.isLeader()) {
          return;
        }
        m.active = false;
        tell = callbacks;
      }
      revoke(tell);
      m.election.close();
      synchronized (lifecycle) {
        if (membership == m) {
          membership = join(tell);
        }
      }
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
