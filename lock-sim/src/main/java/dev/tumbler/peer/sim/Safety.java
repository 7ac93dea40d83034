package dev.tumbler.peer.sim;

import dev.tumbler.peer.core.Claim;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.Predicate;

/**
 * The safety rules every native algorithm keeps, judged over the grants of one run
 * (NATIVE-ALGORITHMS §2.2 and §2.10, I-1 and I-2), whatever the claim's mode:
 *
 * <ul>
 *   <li><b>compatibility</b>: when a grant is made, no other <em>valid</em> grant conflicts with it —
 *       related paths (equal, or one a prefix of the other for transaction paths) and not both
 *       {@link Claim.Mode#READ}; {@link Claim.Mode#PERMITS} grants of a name never conflict pairwise, but the
 *       permits of the valid ones, this one included, stay within the limit (the common limit when every
 *       handle agrees on it; else the largest);
 *   <li><b>fencing F1</b>: no two grants of a name carry the same token;
 *   <li><b>F2</b>: a grant's token is above the token of every grant of the name that had ended before it
 *       was made;
 *   <li><b>F3</b>: an exclusive or write grant's token is above the token of every earlier grant of the name.
 * </ul>
 * For names only ever locked exclusively, F1–F3 are exactly "tokens strictly increase". Which grants are
 * valid is the caller's to say (a simulator knows clocks, crashes and windows): a grant stops counting
 * when it ends, or earlier when the predicate given to {@link #granted} says it is no longer valid.
 * Violations are thrown as {@link IllegalStateException}s whose message starts with the rule's name
 * ({@code exclusion:}, {@code permits:}, {@code fencing:}). Not thread safe.
 */
public final class Safety {

  /**
   * A grant as the checker sees it.
   *
   * @param requestId the request granted
   * @param holder who holds it, for messages (a node and session)
   * @param claim what was granted
   * @param token its fencing token
   * @param permits the permits granted
   */
  public record Grant(long requestId, String holder, Claim claim, long token, int permits) {
    public Grant {
      Objects.requireNonNull(holder, "holder");
      Objects.requireNonNull(claim, "claim");
    }

    @Override
    public String toString() {
      return "#" + requestId + "@" + holder + " " + claim.mode() + " " + claim.name() + " token " + token
          + (claim.mode() == Claim.Mode.PERMITS ? " (" + permits + " of " + claim.limit() + ")" : "");
    }
  }

  /** The fencing history of one name (one path for transactions). */
  private static final class History {
    final Set<Long> tokens = new HashSet<>();
    long highest = Long.MIN_VALUE;
    long highestEnded = Long.MIN_VALUE;
  }

  private final Map<Long, Grant> live = new LinkedHashMap<>();
  private final Map<String, History> histories = new HashMap<>();

  /**
   * Judges a new grant against the live ones that {@code valid} says still count, then records it.
   *
   * @throws IllegalStateException naming the rule it breaks
   */
  public void granted(Grant g, Predicate<Grant> valid) {
    if (live.containsKey(g.requestId())) {
      throw new IllegalStateException("bookkeeping: request #" + g.requestId() + " granted twice");
    }
    List<Grant> counted = new ArrayList<>();
    for (Grant other : live.values()) {
      if (valid.test(other)) {
        counted.add(other);
      }
    }
    for (Grant other : counted) {
      if (conflicts(other.claim(), g.claim())) {
        throw new IllegalStateException("exclusion: " + g + " granted while " + other + " holds it");
      }
    }
    if (g.claim().mode() == Claim.Mode.PERMITS) {
      checkPermits(g, counted);
    }
    History h = histories.computeIfAbsent(key(g.claim()), k -> new History());
    if (!h.tokens.add(g.token())) {
      throw new IllegalStateException("fencing: " + g + " reuses a token already granted on " + g.claim().name());
    }
    if (g.token() <= h.highestEnded) {
      throw new IllegalStateException("fencing: " + g + " is not above token " + h.highestEnded
          + " of a grant of " + g.claim().name() + " that had ended before it");
    }
    boolean exclusive = g.claim().mode() == Claim.Mode.EXCLUSIVE || g.claim().mode() == Claim.Mode.WRITE;
    if (exclusive && g.token() <= h.highest) {
      throw new IllegalStateException("fencing: " + g + " is not above token " + h.highest + " of an earlier grant of "
          + g.claim().name());
    }
    h.highest = Math.max(h.highest, g.token());
    live.put(g.requestId(), g);
  }

  /** The grant of {@code requestId} ended (released, lost, expired, or its holder died); unknown ids are ignored. */
  public void ended(long requestId) {
    Grant g = live.remove(requestId);
    if (g != null) {
      History h = histories.get(key(g.claim()));
      h.highestEnded = Math.max(h.highestEnded, g.token());
    }
  }

  /** The grants made and not ended, in grant order. */
  public List<Grant> live() {
    return List.copyOf(live.values());
  }

  /** Whether two claims may not be held at once. */
  public static boolean conflicts(Claim a, Claim b) {
    if (a.mode() == Claim.Mode.PERMITS || b.mode() == Claim.Mode.PERMITS) {
      return false; // bounded by their sum, not pairwise (and a semaphore is never a lock of the same name)
    }
    if (!related(a.path(), b.path())) {
      return false;
    }
    return !(a.mode() == Claim.Mode.READ && b.mode() == Claim.Mode.READ);
  }

  /**
   * Whether two paths are related: equal, or one a prefix of the other. A flat name is a one-element path,
   * so two flat names are related only when equal.
   */
  static boolean related(List<String> a, List<String> b) {
    int n = Math.min(a.size(), b.size());
    return a.subList(0, n).equals(b.subList(0, n));
  }

  private static void checkPermits(Grant g, List<Grant> counted) {
    int sum = g.permits();
    int limit = g.claim().limit();
    boolean agreed = true;
    for (Grant other : counted) {
      if (other.claim().mode() == Claim.Mode.PERMITS && other.claim().path().equals(g.claim().path())) {
        sum += other.permits();
        agreed &= other.claim().limit() == g.claim().limit();
        limit = Math.max(limit, other.claim().limit());
      }
    }
    if (sum > limit) {
      throw new IllegalStateException("permits: " + g + " makes " + sum + " permits out, above the "
          + (agreed ? "limit " : "largest limit of the handles, ") + limit);
    }
  }

  /** The fencing key of a claim: its path; semaphores and locks of one name keep separate histories. */
  private static String key(Claim c) {
    return (c.mode() == Claim.Mode.PERMITS ? "permits:" : "lock:") + String.join("\u0000", c.path());
  }
}
