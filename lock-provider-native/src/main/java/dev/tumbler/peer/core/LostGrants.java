package dev.tumbler.peer.core;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The lease rule for a grant lost when its window closed (DESIGN: a holder's lost listeners run before another may be
 * granted what it held). A holder trusts a grant for {@code 3T/4} from when it sent the message the grant answers
 * ({@link #trustNanos}); when that window closes unrenewed, the holder is told {@code Lost(EXPIRED)} at once, but what
 * it held is not given back in that step: it is kept, and restated as held, for the rest of the server's own term,
 * {@code T − 3T/4} ({@link #keepNanos}), and given back then. Given back with the loss, another node or client was
 * granted it within a round trip while the holder's lost listeners still ran.
 *
 * <p>One rule for every holder that keeps a lease against a server: the {@code lease} and {@code buckets} clients
 * ({@code dev.tumbler.peer.election.ElectedServer}) and the thin client ({@code ClientCore}). Grants are kept in the
 * order they were lost; since every one is kept equally long, that is also the order they are given back in. Mutable;
 * owned by one core and stepped with it.
 *
 * @param <G> what the core keeps of a lost grant (its request, its lease)
 */
public final class LostGrants<G> {

  private final long keepNanos;
  private final Map<G, Long> until = new LinkedHashMap<>();

  /** @param leaseNanos the term {@code T} of the grants */
  public LostGrants(long leaseNanos) {
    if (leaseNanos <= 0) {
      throw new IllegalArgumentException("a lost grant is kept for the rest of a term: leaseNanos " + leaseNanos);
    }
    this.keepNanos = keepNanos(leaseNanos);
  }

  /** How long a grant is trusted from the send time of the message its grant or renewal answers: {@code 3T/4}. */
  public static long trustNanos(long leaseNanos) {
    return leaseNanos / 4 * 3 + leaseNanos % 4 * 3 / 4;
  }

  /** How long a grant lost when its window closed is kept: the rest of the term, at least a nanosecond. */
  public static long keepNanos(long leaseNanos) {
    return Math.max(1, leaseNanos - trustNanos(leaseNanos));
  }

  /** {@code grant} was lost at {@code now}, its window closed: it is kept until {@link #keepNanos} on. */
  public void keep(G grant, long now) {
    until.put(grant, now + keepNanos);
  }

  /** Whether {@code grant} is kept (lost, not yet given back). */
  public boolean kept(G grant) {
    return until.containsKey(grant);
  }

  /** Whether {@code grant} is kept and its time is up at {@code now}. */
  public boolean over(G grant, long now) {
    Long u = until.get(grant);
    return u != null && now >= u;
  }

  /** Forgets {@code grant}: given back, or gone some other way. */
  public void forget(G grant) {
    until.remove(grant);
  }

  /** Forgets every grant (the session they lived in is gone). */
  public void clear() {
    until.clear();
  }

  /** The grants whose time is up at {@code now}, in the order they were lost; they are forgotten here. */
  public List<G> due(long now) {
    List<G> due = new ArrayList<>();
    for (Iterator<Map.Entry<G, Long>> i = until.entrySet().iterator(); i.hasNext(); ) {
      Map.Entry<G, Long> e = i.next();
      if (e.getValue() > now) {
        break; // in the order they were lost, each kept as long
      }
      i.remove();
      due.add(e.getKey());
    }
    return due;
  }

  /** When the first kept grant's time is up, or {@link Long#MAX_VALUE} when none is kept. */
  public long next() {
    return until.isEmpty() ? Long.MAX_VALUE : until.values().iterator().next();
  }

  /** The kept grants, in the order they were lost: what a restatement lists as held. */
  public Collection<G> grants() {
    return until.keySet();
  }

  /** Whether no grant is kept. */
  public boolean isEmpty() {
    return until.isEmpty();
  }
}
