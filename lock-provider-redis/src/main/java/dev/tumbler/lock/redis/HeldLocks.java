package dev.tumbler.lock.redis;

import dev.tumbler.lock.HeldLock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import redis.clients.jedis.ScanIteration;
import redis.clients.jedis.UnifiedJedis;
import redis.clients.jedis.resps.Tuple;

/**
 * Lists the grants under one namespace for {@code LockService.heldLocks()}: SCAN for the namespace's keys
 * (on every node of a cluster), then read each holder key and its TTL, or each member of a sorted set of
 * holders and its expiry. Not atomic: a grant may end between the SCAN and the read, and is then left out.
 *
 * <p>The token is the name's fencing counter ({@code <base>:fence}): the last token issued for the name,
 * at least the holder's own, which Redis does not keep for a plain grant. Holders are owner values
 * ({@code <label>|<client id>:<sequence>}); for a semaphore the permits follow ({@code ... x2}).
 * Redlock: each master is listed, and a grant is reported when a majority of them hold the same owner, with
 * the shortest remaining term and the largest counter among them.
 */
final class HeldLocks {
  private static final String NOW_MS = """
      local t = redis.call('TIME')
      return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
      """;

  private HeldLocks() {
  }

  /** Redlock: what a majority of {@code perNode}'s lists agree on. */
  static List<HeldLock> majority(List<List<HeldLock>> perNode, int majority) {
    Map<List<String>, List<HeldLock>> byGrant = new HashMap<>();
    for (List<HeldLock> node : perNode) {
      for (HeldLock h : node) {
        byGrant.computeIfAbsent(List.of(h.name(), h.kind(), h.holder()), k -> new ArrayList<>()).add(h);
      }
    }
    List<HeldLock> out = new ArrayList<>();
    for (List<HeldLock> same : byGrant.values()) {
      if (same.size() >= majority) {
        HeldLock first = same.getFirst();
        OptionalLong token = same.stream().filter(h -> h.token().isPresent())
            .mapToLong(h -> h.token().getAsLong()).max();
        Optional<Duration> remaining = same.stream().map(HeldLock::remaining).flatMap(Optional::stream)
            .min(Comparator.naturalOrder());
        out.add(new HeldLock(first.name(), first.kind(), first.holder(), token, false, remaining));
      }
    }
    return sorted(out);
  }

  /** The grants on one server (or one cluster) under {@code keys}' namespace. */
  static List<HeldLock> list(UnifiedJedis jedis, RedisKeys keys) {
    String prefix = keys.prefix();
    List<HeldLock> out = new ArrayList<>();
    ScanIteration scan = jedis.scanIteration(500, escapeGlob(prefix) + "*");
    while (!scan.isIterationCompleted()) {
      for (String key : scan.nextBatch().getResult()) {
        read(jedis, prefix, key, out);
      }
    }
    return sorted(out);
  }

  private static List<HeldLock> sorted(List<HeldLock> list) {
    list.sort(Comparator.comparing(HeldLock::name).thenComparing(HeldLock::kind).thenComparing(HeldLock::holder));
    return List.copyOf(list);
  }

  /** Adds the grants that {@code key} records, if it is a holder key of this namespace. */
  private static void read(UnifiedJedis jedis, String prefix, String key, List<HeldLock> out) {
    // <kind>:{<encoded name>}<suffix>; a key of a nested namespace ("tumbler:ns:..." when this namespace is
    // empty) has no "{" right after its second segment and is skipped
    String rest = key.substring(prefix.length());
    int colon = rest.indexOf(':');
    if (colon < 0 || rest.length() < colon + 2 || rest.charAt(colon + 1) != '{') {
      return;
    }
    int close = rest.indexOf('}', colon + 2);
    if (close < 0) {
      return;
    }
    String kindSegment = rest.substring(0, colon);
    String name;
    try {
      name = RedisKeys.decode(rest.substring(colon + 2, close));
    } catch (RuntimeException e) {
      return; // not a key Tumbler wrote
    }
    String suffix = rest.substring(close + 1);
    String base = key.substring(0, prefix.length() + close + 1);
    switch (kindSegment + suffix) {
      case "m" -> single(jedis, key, base + ":fence", name, "mutex", out);
      case "e" -> single(jedis, key, base + ":fence", name, "election", out);
      case "rw:w" -> single(jedis, key, base + ":fence", name, "write", out);
      case "rw:r" -> sortedSet(jedis, key, null, base + ":fence", name, "read", out);
      case "s:h" -> sortedSet(jedis, key, base + ":p", base + ":fence", name, "semaphore", out);
      default -> {
        // fence counters, lines of waiters, permit hashes: read with their holder key
      }
    }
  }

  private static void single(UnifiedJedis jedis, String key, String fence, String name, String kind,
      List<HeldLock> out) {
    String owner = jedis.get(key);
    long pttl = jedis.pttl(key);
    if (owner == null || pttl == -2) {
      return; // released meanwhile
    }
    Optional<Duration> remaining = pttl >= 0 ? Optional.of(Duration.ofMillis(pttl)) : Optional.empty();
    out.add(new HeldLock(name, kind, owner, counter(jedis, fence), false, remaining));
  }

  private static void sortedSet(UnifiedJedis jedis, String key, String permits, String fence, String name,
      String kind, List<HeldLock> out) {
    List<Tuple> members = jedis.zrangeWithScores(key, 0, -1);
    if (members.isEmpty()) {
      return;
    }
    // the expiries are on the server's clock: read it in the same slot
    long now = (Long) jedis.eval(NOW_MS, List.of(key), List.of());
    OptionalLong token = counter(jedis, fence);
    for (Tuple t : members) {
      long left = (long) t.getScore() - now;
      if (left <= 0) {
        continue; // expired, not yet cleaned up
      }
      String holder = t.getElement();
      if (permits != null) {
        String n = jedis.hget(permits, holder);
        if (n != null) {
          holder = holder + " x" + n;
        }
      }
      out.add(new HeldLock(name, kind, holder, token, false, Optional.of(Duration.ofMillis(left))));
    }
  }

  private static OptionalLong counter(UnifiedJedis jedis, String fence) {
    String v = jedis.get(fence);
    if (v == null) {
      return OptionalLong.empty();
    }
    try {
      return OptionalLong.of(Long.parseLong(v));
    } catch (NumberFormatException e) {
      return OptionalLong.empty();
    }
  }

  /** {@code s} as a SCAN MATCH pattern that matches only itself. */
  static String escapeGlob(String s) {
    StringBuilder sb = new StringBuilder(s.length() + 4);
    for (char c : s.toCharArray()) {
      if (c == '*' || c == '?' || c == '[' || c == ']' || c == '\\') {
        sb.append('\\');
      }
      sb.append(c);
    }
    return sb.toString();
  }
}
