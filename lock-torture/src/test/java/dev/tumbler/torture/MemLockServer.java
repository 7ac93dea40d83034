package dev.tumbler.torture;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A tiny lock server for the known-answer tests of the torture harness: it runs in the test's JVM, its clients are
 * the worker processes ({@link MemLockProvider}, {@code lock:torture-mem://host:port}), and it breaks, on purpose, the
 * names whose requests carry a defect:
 *
 * <ul>
 *   <li>{@code grant-twice}: every third attempt on a held name is granted too, with the holder's token: two holders
 *       with one token (safety, lease exclusion, token order);
 *   <li>{@code token-restart}: the token counter starts again at 1 after every fifth grant, as a server that forgot it
 *       (token order);
 *   <li>{@code lost-late}: the lock is freed a tenth of a term after each grant or renewal, and the holder hears it
 *       only at its next renewal, as after a restart without persistence (lease exclusion, lost notification);
 *   <li>{@code stuck}: a release is ignored and a lease never expires: the name stays held for ever once granted
 *       (recovery).
 * </ul>
 *
 * <p>A line protocol: {@code ACQ name owner ttlMillis defect} → {@code OK token} or {@code NO};
 * {@code RENEW name owner token ttlMillis defect} → {@code OK} or {@code LOST}; {@code REL name owner token defect} →
 * {@code OK}. Time is the server's monotonic clock. Thread safe.
 */
final class MemLockServer implements AutoCloseable {
  private final LineServer server;
  private final Map<String, Name> names = new HashMap<>();

  private static final class Holder {
    final String owner;
    final long token;
    long expires;

    Holder(String owner, long token, long expires) {
      this.owner = owner;
      this.token = token;
      this.expires = expires;
    }
  }

  private static final class Name {
    final List<Holder> holders = new ArrayList<>();
    long counter;
    long attempts;
  }

  MemLockServer() {
    server = new LineServer("torture-mem", () -> this::handle);
  }

  String address() {
    return server.address();
  }

  private static long now() {
    return TimeUnit.NANOSECONDS.toMillis(System.nanoTime());
  }

  synchronized String handle(String line) {
    String[] p = line.split(" ");
    String defect = p[p.length - 1];
    Name n = names.computeIfAbsent(p[1], k -> new Name());
    long now = now();
    if (!defect.equals("stuck")) {
      n.holders.removeIf(h -> h.expires - now <= 0);
    }
    switch (p[0]) {
      case "ACQ" -> {
        long ttl = Long.parseLong(p[3]);
        long expires = now + (defect.equals("lost-late") ? ttl / 10 : ttl);
        if (n.holders.isEmpty()) {
          long token = ++n.counter;
          if (defect.equals("token-restart") && n.counter % 5 == 0) {
            n.counter = 0;
          }
          n.holders.add(new Holder(p[2], token, defect.equals("stuck") ? Long.MAX_VALUE : expires));
          return "OK " + token;
        }
        if (defect.equals("grant-twice") && n.holders.size() == 1 && ++n.attempts % 3 == 0) {
          long token = n.holders.getFirst().token;
          n.holders.add(new Holder(p[2], token, expires));
          return "OK " + token;
        }
        return "NO";
      }
      case "RENEW" -> {
        long token = Long.parseLong(p[3]);
        long ttl = Long.parseLong(p[4]);
        for (Holder h : n.holders) {
          if (h.owner.equals(p[2]) && h.token == token) {
            if (!defect.equals("stuck")) {
              h.expires = now + (defect.equals("lost-late") ? ttl / 10 : ttl);
            }
            return "OK";
          }
        }
        return "LOST";
      }
      case "REL" -> {
        if (!defect.equals("stuck")) {
          long token = Long.parseLong(p[3]);
          n.holders.removeIf(h -> h.owner.equals(p[2]) && h.token == token);
        }
        return "OK";
      }
      default -> {
        return "ERR unknown request " + p[0];
      }
    }
  }

  @Override
  public void close() {
    server.close();
  }
}
