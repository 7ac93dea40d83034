package dev.tumbler.peer.sim;

import java.util.HashMap;
import java.util.Map;

/**
 * The windows of the grants of one run, and the rules they keep (NATIVE-ALGORITHMS §2.3 and §2.10, I-4):
 *
 * <ul>
 *   <li><b>lease</b>: in a run with a lease term {@code T}, every grant has a window: it is trusted from
 *       {@code sentAt} (the send time of the client's message it answers, never after the grant is reported)
 *       until {@code validUntil = sentAt + T·3/4}, and that is still ahead when the grant is reported (a
 *       grant already over when it reaches its client must not be reported: its holder could not use it,
 *       and a server may have granted it to another since); in a run without one, grants are unbounded;
 *   <li><b>renewal</b>: a {@code Renewed} comes only for a held grant whose window has not closed by its
 *       holder's clock, its {@code sentAt} never goes back, and its {@code validUntil} is again
 *       {@code sentAt + T·3/4}.
 * </ul>
 * Times are the holder's local clock, as the core reports them. Violations are thrown as
 * {@link IllegalStateException}s whose message starts with the rule's name ({@code lease:},
 * {@code renewal:}). Not thread safe.
 */
public final class Leases {

  /** A grant's window, by its holder's clock. */
  public record Window(long sentAt, long validUntil) {
    /** The window of a grant with no term. */
    public static final Window UNBOUNDED = new Window(Long.MIN_VALUE, Long.MAX_VALUE);

    /** Whether the grant is trusted at local time {@code now}. */
    public boolean validAt(long now) {
      return now < validUntil;
    }
  }

  private final long leaseNanos;
  private final long trustNanos;
  private final Map<Long, Window> held = new HashMap<>();

  /** @param leaseNanos the lease term {@code T} of the run's grants; 0 when they have none */
  public Leases(long leaseNanos) {
    if (leaseNanos < 0) {
      throw new IllegalArgumentException("leaseNanos must not be negative: " + leaseNanos);
    }
    this.leaseNanos = leaseNanos;
    this.trustNanos = trust(leaseNanos);
  }

  /** How long a client trusts a grant from {@code sentAt}: {@code T·3/4}, rounded down (the safety factor s). */
  public static long trust(long leaseNanos) {
    return leaseNanos / 4 * 3 + leaseNanos % 4 * 3 / 4;
  }

  /** Whether the run's grants have a term. */
  public boolean leased() {
    return leaseNanos > 0;
  }

  /**
   * Judges the window of a new grant of {@code requestId}, reported at the holder's local time {@code now},
   * and records it.
   *
   * @throws IllegalStateException naming the rule it breaks
   */
  public void granted(long requestId, long now, long sentAt, long validUntil) {
    if (!leased()) {
      if (validUntil != Long.MAX_VALUE || sentAt != Long.MIN_VALUE) {
        throw new IllegalStateException("lease: #" + requestId + " granted with a window [" + sentAt + ", "
            + validUntil + ") in a run whose grants have no term");
      }
      held.put(requestId, Window.UNBOUNDED);
      return;
    }
    Window w = new Window(sentAt, validUntil);
    check("lease", "granted", requestId, now, w);
    held.put(requestId, w);
  }

  /**
   * Judges a renewal of {@code requestId} reported at the holder's local time {@code now}, and records its
   * window.
   *
   * @throws IllegalStateException naming the rule it breaks
   */
  public void renewed(long requestId, long now, long sentAt, long validUntil) {
    Window before = held.get(requestId);
    if (before == null) {
      throw new IllegalStateException("renewal: #" + requestId + " renewed, but it is not held");
    }
    if (!leased()) {
      if (validUntil != Long.MAX_VALUE || sentAt != Long.MIN_VALUE) {
        throw new IllegalStateException("renewal: #" + requestId + " renewed with a window [" + sentAt + ", "
            + validUntil + ") in a run whose grants have no term");
      }
      return;
    }
    if (!before.validAt(now)) {
      throw new IllegalStateException("renewal: #" + requestId + " renewed " + (now - before.validUntil())
          + " ns after its window closed (validUntil " + before.validUntil() + "): an expired grant came back");
    }
    if (sentAt < before.sentAt()) {
      throw new IllegalStateException("renewal: #" + requestId + " renewed from sentAt " + sentAt
          + ", before the sentAt " + before.sentAt() + " already reported");
    }
    Window w = new Window(sentAt, validUntil);
    check("renewal", "renewed", requestId, now, w);
    held.put(requestId, w);
  }

  private void check(String rule, String what, long requestId, long now, Window w) {
    if (w.validUntil() != w.sentAt() + trustNanos) {
      throw new IllegalStateException(rule + ": #" + requestId + " " + what + " valid until " + w.validUntil()
          + " from sentAt " + w.sentAt() + ": not sentAt + T·3/4 = sentAt + " + trustNanos);
    }
    if (w.sentAt() > now) {
      throw new IllegalStateException(rule + ": #" + requestId + " " + what + " at " + now + " trusting it from "
          + w.sentAt() + ", later than now");
    }
    if (!w.validAt(now)) {
      throw new IllegalStateException(rule + ": #" + requestId + " " + what + " at " + now + " with a window that"
          + " had closed at " + w.validUntil());
    }
  }

  /** The grant of {@code requestId} ended; unknown ids are ignored. */
  public void ended(long requestId) {
    held.remove(requestId);
  }

  /** The window of the held grant {@code requestId}; {@link Window#UNBOUNDED} for an unknown one. */
  public Window window(long requestId) {
    return held.getOrDefault(requestId, Window.UNBOUNDED);
  }
}
