package dev.tumbler.torture;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What a run was and the bounds it is judged by, as its history's first event ({@code run}) carries them, so that
 * the checker reads nothing but the history.
 *
 * @param target the backend's name ({@code redis}, {@code zookeeper}, …) or {@code url}
 * @param backend what the backend is: its servers and their addresses
 * @param url the lock URL the clients opened, with secrets shown as {@code ***} (each client has proxies of its
 *     own in place of these addresses)
 * @param clients the clients running at any time
 * @param names the lock names
 * @param timeMillis the length of the fault phase
 * @param nemeses the faults the schedule drew from
 * @param seed the seed of the schedule's and the clients' random choices
 * @param leaseMillis the lease term the clients run with
 * @param maxWaitMillis each acquire's wait bound
 * @param waitSlackMillis how far past {@code maxWait} a wait may return (the API's 2 s)
 * @param wakeSlackMillis how soon after a paused client is resumed its {@code onLost} must arrive for its lease to
 *     count as ended when the pause began
 * @param recoveryMillis how long a name may stay unavailable after a fault healed
 * @param allowanceMillis the target's failover time: how long after a server fault the backend may still be settling
 *     (a server fault that ended this long before a violation is still among its causes)
 */
public record RunParameters(String target, String backend, String url, int clients, int names, long timeMillis, List<String> nemeses,
    long seed, long leaseMillis, long maxWaitMillis, long waitSlackMillis, long wakeSlackMillis,
    long recoveryMillis, long allowanceMillis) {

  public RunParameters {
    nemeses = List.copyOf(nemeses);
  }

  /** As the {@code detail} of the {@code run} event: {@code key=value;…} (a value holds no {@code ;}). */
  public String toDetail() {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("target", target);
    m.put("backend", backend.replace(';', ','));
    m.put("url", url.replace(';', ','));
    m.put("clients", clients);
    m.put("names", names);
    m.put("time", timeMillis);
    m.put("nemeses", String.join(",", nemeses));
    m.put("seed", seed);
    m.put("lease", leaseMillis);
    m.put("maxWait", maxWaitMillis);
    m.put("waitSlack", waitSlackMillis);
    m.put("wakeSlack", wakeSlackMillis);
    m.put("recovery", recoveryMillis);
    m.put("allowance", allowanceMillis);
    StringBuilder b = new StringBuilder();
    for (Map.Entry<String, Object> e : m.entrySet()) {
      if (!b.isEmpty()) {
        b.append(';');
      }
      b.append(e.getKey()).append('=').append(e.getValue());
    }
    return b.toString();
  }

  /** Reads {@link #toDetail()}. */
  public static RunParameters parse(String detail) {
    Map<String, String> m = new LinkedHashMap<>();
    for (String part : detail.split(";")) {
      int eq = part.indexOf('=');
      if (eq > 0) {
        m.put(part.substring(0, eq), part.substring(eq + 1));
      }
    }
    try {
      String nem = m.getOrDefault("nemeses", "");
      return new RunParameters(m.getOrDefault("target", "?"), m.getOrDefault("backend", "?"), m.getOrDefault("url", "?"),
          Integer.parseInt(m.get("clients")), Integer.parseInt(m.get("names")), Long.parseLong(m.get("time")),
          nem.isEmpty() ? List.of() : List.of(nem.split(",")), Long.parseLong(m.get("seed")),
          Long.parseLong(m.get("lease")), Long.parseLong(m.get("maxWait")), Long.parseLong(m.get("waitSlack")),
          Long.parseLong(m.get("wakeSlack")), Long.parseLong(m.get("recovery")),
          Long.parseLong(m.getOrDefault("allowance", "0")));
    } catch (RuntimeException e) {
      throw new IllegalArgumentException("the run event's parameters are incomplete: " + detail, e);
    }
  }
}
