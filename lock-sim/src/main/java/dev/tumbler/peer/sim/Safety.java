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
import java.util.TreeMap;
import java.util.function.Predicate;

/**
 * The safety rules every native algorithm keeps, judged over the grants of one run
 * (NATIVE-ALGORITHMS §2.2 and §2.10, I-1 and I-2), whatever the claim's mode:
 *
 * <ul>
 *   <li><b>compatibility</b>: when a grant is made, no other <em>valid</em> grant conflicts with it —
 *       related paths (equal, or one a prefix of the other for transaction paths) and not both
 *       {@link Claim.Mode#READ}; {@link Claim.Mode#PERMITS} grants of a name never conflict pairwise, but the
 *       permits of the valid ones, this one included, stay within the limit of the new grant's handle (BU-1);
 *   <li><b>fencing F1</b>: no two grants of a name carry the same token;
 *   <li><b>F2</b>: a grant's token is above the token of every grant of the name that had ended before it
 *       was made;
 *   <li><b>F3</b>: an exclusive or write grant's token is above the token of every earlier grant of the name.
 * </ul>
 * For names only ever locked exclusively, F1–F3 are exactly "tokens strictly increase". Which grants are
 * valid is the caller's to say (a simulator knows clocks, crashes and windows): a grant stops counting
 * when it ends, or earlier when the predicate given to {@link #granted} says it is no longer valid.
 *
 * <p>Times. A grant of an echo-rule algorithm (NATIVE-ALGORITHMS §2.3) counts from the moment its client
 * sent the message the grant answers ({@link Grant#madeAt()}, which precedes the server's decision), not
 * from the moment the client heard of it: F2 compares its token with the grants that had ended before
 * that moment. A grant whose report travelled slowly is not blamed for a shared grant that the server
 * made, and that ended, while the report was on its way. Callers that judge no windows leave both times
 * out: a grant is then made after every grant ended so far.
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
   * @param madeAt when the grant started to count, on the caller's time line ({@link Long#MAX_VALUE}: after
   *     every end reported so far)
   * @param tx the transaction it is a claim of, or 0: the claims of one transaction do not exclude each other
   */
  public record Grant(long requestId, String holder, Claim claim, long token, int permits, long madeAt, long tx) {
    public Grant {
      Objects.requireNonNull(holder, "holder");
      Objects.requireNonNull(claim, "claim");
    }

    /** A grant of a request of its own (no transaction). */
    public Grant(long requestId, String holder, Claim claim, long token, int permits, long madeAt) {
      this(requestId, holder, claim, token, permits, madeAt, 0);
    }

    /** A grant made after every grant that ended so far. */
    public Grant(long requestId, String holder, Claim claim, long token, int permits) {
      this(requestId, holder, claim, token, permits, Long.MAX_VALUE);
    }

    @Override
    public String toString() {
      return "#" + requestId + "@" + holder + " " + claim.mode() + " " + claim.name() + " token " + token
          + (claim.mode() == Claim.Mode.PERMITS ? " (" + permits + " of " + claim.limit() + ")" : "");
    }
  }

  /** The fencing history of one name (one path for transactions). */
  private static final class History {
    /** Every token granted, with the transaction of its grant (0 for none). */
    final TreeMap<Long, Long> tokens = new TreeMap<>();
    /** End time → the highest token of the grants that ended then or before (ends come in time order). */
    final TreeMap<Long, Long> endedBy = new TreeMap<>();
    /** The transactions' grants that ended: end time → token → transaction (a token of several is its own). */
    final TreeMap<Long, Map<Long, Long>> txEnds = new TreeMap<>();

    long highestEndedBefore(long at) {
      Map.Entry<Long, Long> e = endedBy.lowerEntry(at);
      return e == null ? Long.MIN_VALUE : e.getValue();
    }

    /**
     * The highest token of a grant that ended before {@code at}, leaving out the grants of transaction {@code tx}
     * (not 0) whose token is {@code token}: a transaction's claims on one path share its entry's token.
     */
    long highestEndedBefore(long at, long tx, long token) {
      long highest = highestEndedBefore(at);
      if (tx == 0 || highest != token) {
        return highest;
      }
      // the highest is this very token: it counts only if a grant of another transaction ended with it
      for (Map<Long, Long> byToken : txEnds.headMap(at, false).values()) {
        Long owner = byToken.get(token);
        if (owner != null && owner == tx) {
          return Long.MIN_VALUE; // its own: tokens below it were checked when it was granted
        }
      }
      return highest;
    }

    void ended(long at, long token, long tx) {
      Map.Entry<Long, Long> last = endedBy.lastEntry();
      long stamp = last == null ? at : Math.max(at, last.getKey()); // never back: ends are reported in order
      long highest = last == null ? token : Math.max(last.getValue(), token);
      endedBy.put(stamp, highest);
      if (tx != 0) {
        txEnds.computeIfAbsent(stamp, k -> new HashMap<>()).put(token, tx);
      }
    }
  }

  private final Map<Long, Grant> live = new LinkedHashMap<>();
  private final Map<String, History> histories = new HashMap<>();

  /**
   * Judges a new grant against the live ones that {@code valid} says still count, then records it.
   *
   * @throws IllegalStateException naming the rule it breaks
   */
  public void granted(Grant g, Predicate<Grant> valid) {
    granted(g, valid, false);
  }

  /**
   * As {@link #granted(Grant, Predicate)}; {@code unused}: a grant its client gave up before the deciding core knew,
   * which no one uses. Exclusion, permits and F1 are judged; F2 and F3 are not: its token may be the core's hold of
   * a transaction whose other grants of the path its client's giving up ended.
   *
   * @throws IllegalStateException naming the rule it breaks
   */
  public void granted(Grant g, Predicate<Grant> valid, boolean unused) {
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
      // the claims of one transaction never exclude each other (a path and its parent, a read and its upgrade)
      if (conflicts(other.claim(), g.claim()) && (g.tx() == 0 || other.tx() != g.tx())) {
        throw new IllegalStateException("exclusion: " + g + " granted while " + other + " holds it");
      }
    }
    if (g.claim().mode() == Claim.Mode.PERMITS) {
      checkPermits(g, counted);
    }
    History h = histories.computeIfAbsent(key(g.claim()), k -> new History());
    // a transaction's claims on one path are one lock: a read and its upgrade granted together share the token
    Long before = h.tokens.get(g.token());
    if (before != null && (g.tx() == 0 || before != g.tx())) {
      throw new IllegalStateException("fencing: " + g + " reuses a token already granted on " + g.claim().name());
    }
    // the same hold told again: a transaction that asks again for a path it holds, while that grant is valid, is
    // told that grant's token (F2 was checked when it was made; readers granted and ended since do not change it)
    boolean sameHold = unused || g.tx() != 0 && counted.stream()
        .anyMatch(o -> o.tx() == g.tx() && o.token() == g.token() && key(o.claim()).equals(key(g.claim())));
    long highestEnded = sameHold ? Long.MIN_VALUE : h.highestEndedBefore(g.madeAt(), g.tx(), g.token());
    if (g.token() <= highestEnded) {
      throw new IllegalStateException("fencing: " + g + " is not above token " + highestEnded
          + " of a grant of " + g.claim().name() + " that had ended before it");
    }
    boolean exclusive = g.claim().mode() == Claim.Mode.EXCLUSIVE || g.claim().mode() == Claim.Mode.WRITE;
    if (exclusive && !unused) {
      for (Map.Entry<Long, Long> e : h.tokens.tailMap(g.token(), true).entrySet()) {
        if (g.tx() == 0 || e.getValue() != g.tx()) {
          throw new IllegalStateException("fencing: " + g + " is not above token " + h.tokens.lastKey()
              + " of an earlier grant of " + g.claim().name());
        }
      }
    }
    h.tokens.put(g.token(), g.tx());
    live.put(g.requestId(), g);
  }

  /**
   * The grant of {@code requestId} ended (released, lost, expired, or its holder died) before every grant
   * made from now on; unknown ids are ignored.
   */
  public void ended(long requestId) {
    ended(requestId, Long.MIN_VALUE);
  }

  /**
   * The grant of {@code requestId} ended at {@code at} (released, lost, expired, or its holder died): it
   * counts for F2 of every grant made after {@code at}. Unknown ids are ignored. Ends are reported in time
   * order; one reported earlier than the one before is taken as at that one's time.
   */
  public void ended(long requestId, long at) {
    Grant g = live.remove(requestId);
    if (g != null) {
      histories.get(key(g.claim())).ended(at, g.token(), g.tx());
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

  /**
   * BU-1 (NATIVE-ALGORITHMS §6.4): the permits of the valid grants of the name made before this one (smaller tokens:
   * the server's order), and this one's, fit in the limit of the handle it was made for (its resources times the
   * bucket size); and all the valid grants fit in the largest limit among them. A handle with fewer resources is
   * refused what one with more may take; a grant made later for a larger handle may be reported first, so each is
   * judged against the ones made before it.
   */
  private static void checkPermits(Grant g, List<Grant> counted) {
    int before = g.permits();
    int all = g.permits();
    int largest = g.claim().limit();
    for (Grant other : counted) {
      if (other.claim().mode() == Claim.Mode.PERMITS && other.claim().path().equals(g.claim().path())) {
        all += other.permits();
        largest = Math.max(largest, other.claim().limit());
        if (other.token() < g.token()) {
          before += other.permits();
        }
      }
    }
    if (before > g.claim().limit()) {
      throw new IllegalStateException("permits: " + g + " makes " + before + " permits out with the grants made "
          + "before it, above its handle's limit " + g.claim().limit());
    }
    if (all > largest) {
      throw new IllegalStateException("permits: " + g + " makes " + all + " permits out, above the largest limit "
          + largest + " of their handles");
    }
  }

  /** The fencing key of a claim: its path; semaphores and locks of one name keep separate histories. */
  private static String key(Claim c) {
    return (c.mode() == Claim.Mode.PERMITS ? "permits:" : "lock:") + String.join("\u0000", c.path());
  }
}
