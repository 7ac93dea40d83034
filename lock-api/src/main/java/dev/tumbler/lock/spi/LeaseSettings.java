package dev.tumbler.lock.spi;

import dev.tumbler.lock.InvalidLockUrlException;
import java.time.Duration;
import java.util.Objects;
import java.util.Set;

/**
 * The lease parameters every provider shares, read from the common URL parameters:
 *
 * <ul>
 *   <li>{@code leaseTime} — the term {@code T} of a lease (default 30 s);
 *   <li>{@code renew} — {@code auto} (default: renewed in the background every {@code T/3}) or
 *       {@code manual} (the holder calls {@link dev.tumbler.lock.Lease#renew()});
 *   <li>{@code namespace} — a prefix that separates applications sharing one backend (default empty).
 * </ul>
 *
 * <p>{@code safety} is the fraction of the term the client trusts a lease for, counted from the moment
 * its request was sent (default 3/4): the client gives a lease up before the backend can, as long as
 * clock rates differ by less than {@code 1/safety - 1}.
 *
 * @param leaseTime the term; {@code null} for leases that never expire (providers without
 *     {@link dev.tumbler.lock.Capability#LEASE_EXPIRY}, whose grants hold until released)
 * @param safety the trusted fraction of the term, in (0, 1)
 * @param renew how leases are renewed
 * @param namespace the namespace, possibly empty
 */
public record LeaseSettings(Duration leaseTime, double safety, Renew renew, String namespace) {

  /** The names of the common parameters, for {@link LockUrl#requireKnownParameters}. */
  public static final Set<String> PARAMETERS = Set.of("leaseTime", "renew", "namespace");

  /** The default term. */
  public static final Duration DEFAULT_LEASE_TIME = Duration.ofSeconds(30);

  /** The default safety factor. */
  public static final double DEFAULT_SAFETY = 0.75;

  /** The shortest term accepted: renewing faster than every few milliseconds is a misconfiguration. */
  public static final Duration MIN_LEASE_TIME = Duration.ofMillis(100);

  /** How leases are renewed. */
  public enum Renew {
    /** In the background, every {@code T/3}, until released. */
    AUTO,
    /** Only when the holder calls {@link dev.tumbler.lock.Lease#renew()}. */
    MANUAL
  }

  public LeaseSettings {
    if (leaseTime != null && leaseTime.compareTo(MIN_LEASE_TIME) < 0) {
      throw new IllegalArgumentException("leaseTime must be at least " + MIN_LEASE_TIME.toMillis() + "ms: " + leaseTime);
    }
    if (!(safety > 0 && safety < 1)) {
      throw new IllegalArgumentException("safety must be within (0, 1): " + safety);
    }
    Objects.requireNonNull(renew, "renew");
    Objects.requireNonNull(namespace, "namespace");
  }

  /** 30 s, safety 3/4, automatic renewal, no namespace. */
  public static LeaseSettings defaults() {
    return new LeaseSettings(DEFAULT_LEASE_TIME, DEFAULT_SAFETY, Renew.AUTO, "");
  }

  /** Leases that hold until released (no term, no renewal). */
  public static LeaseSettings unbounded(String namespace) {
    return new LeaseSettings(null, DEFAULT_SAFETY, Renew.MANUAL, namespace);
  }

  /**
   * Reads {@code leaseTime}, {@code renew} and {@code namespace} from {@code url}.
   *
   * @throws InvalidLockUrlException naming the parameter if one is invalid
   */
  public static LeaseSettings fromUrl(LockUrl url) {
    Duration t = url.duration("leaseTime", DEFAULT_LEASE_TIME);
    if (t.compareTo(MIN_LEASE_TIME) < 0) {
      throw new InvalidLockUrlException("lock URL " + url + ": parameter 'leaseTime': " + t.toMillis()
          + "ms is shorter than the minimum " + MIN_LEASE_TIME.toMillis() + "ms");
    }
    Renew r = url.enumValue("renew", Renew.class, Renew.AUTO);
    return new LeaseSettings(t, DEFAULT_SAFETY, r, namespace(url));
  }

  /**
   * Reads only the {@code namespace} parameter (empty when absent), for providers whose leases have no
   * term and who refuse {@code leaseTime} and {@code renew}.
   *
   * @throws InvalidLockUrlException if it is not a valid name
   */
  public static String namespace(LockUrl url) {
    String ns = url.string("namespace", "");
    if (!ns.isEmpty()) {
      try {
        Checks.name(ns, "namespace");
      } catch (IllegalArgumentException e) {
        throw new InvalidLockUrlException("lock URL " + url + ": parameter 'namespace': " + e.getMessage());
      }
    }
    return ns;
  }

  /** Whether leases expire (have a term). */
  public boolean expires() {
    return leaseTime != null;
  }

  /** The part of the term the client trusts, in nanoseconds; {@link Long#MAX_VALUE} without a term. */
  public long trustedNanos() {
    return leaseTime == null ? Long.MAX_VALUE : (long) (leaseTime.toNanos() * safety);
  }

  /** The interval between background renewals, {@code T/3}, in nanoseconds. */
  public long renewIntervalNanos() {
    return leaseTime == null ? Long.MAX_VALUE : leaseTime.toNanos() / 3;
  }

  /** These settings with another term. */
  public LeaseSettings withLeaseTime(Duration t) {
    return new LeaseSettings(t, safety, renew, namespace);
  }
}
