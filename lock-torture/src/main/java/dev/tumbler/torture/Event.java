package dev.tumbler.torture;

import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;

/**
 * One entry of a torture run's history: something a client did or saw, or something the harness did, stamped by
 * the {@link Register} with its sequence number ({@code seq}, the ground truth for "before") and the time it was
 * received ({@code at}, milliseconds since the run started, on the harness's monotonic clock). One line of JSON in
 * {@code history.jsonl}; fields that do not apply to the type are absent.
 *
 * @param seq the register's receive order, from 1
 * @param at milliseconds since the run started, when the register received it
 * @param type what happened
 * @param client the client process ({@code c1}, {@code c2}, …) it happened to, or the client a fault hit
 * @param name the lock name
 * @param token the fencing token of a grant, a write, a loss or a release
 * @param grant the client's own number of the grant (1, 2, …): a lease is (client, grant)
 * @param millis an invocation's wait bound, a completion's time waited (measured by the client)
 * @param highest for a stale write: the highest token the register had accepted for the name
 * @param fault a fault's kind ({@code kill}, {@code pause}, …)
 * @param id a fault's number in the run, the same on its start and its end
 * @param target what a fault hit (a client or a server)
 * @param detail free text: a loss's reason, an exception, a run's parameters
 */
public record Event(long seq, long at, Type type, String client, String name, Long token, Long grant, Long millis,
    Long highest, String fault, Long id, String target, String detail) {

  /** The kinds of events, with their names in the history. */
  public enum Type {
    /** The run's parameters ({@code detail}: {@code key=value;…}); the first event. */
    RUN,
    /** The harness started a client process. */
    SPAWN,
    /** A client connected: its provider and capabilities ({@code detail}). */
    HELLO,
    /** A client calls {@code tryAcquire(millis)} on {@code name}. */
    INVOKE,
    /** ... and was granted, with {@code token}, after {@code millis}. */
    GRANT,
    /** ... and the wait ended empty after {@code millis}. */
    TIMEOUT,
    /** ... and it threw ({@code detail}) after {@code millis}. */
    FAIL,
    /** A write with {@code token} that the register accepted. */
    WRITE,
    /** A write the register rejected: {@code token} is below {@code highest}. */
    STALE,
    /** The lease's {@code onLost} fired ({@code detail}: the reason). */
    LOST,
    /** The client is about to release the lease: from here on it does not use it. */
    RELEASE,
    /** The release returned ({@code detail}: an exception, if it threw). */
    RELEASED,
    /** The client is stopping, as asked. */
    BYE,
    /** The harness saw a client process end ({@code detail}: its exit code). */
    EXIT,
    /** A fault begins. */
    FAULT_START,
    /** A fault ends (healed, resumed, restarted). */
    FAULT_END;

    /** The name in the history: {@code fault-start}, {@code grant}, … */
    public String wire() {
      return name().toLowerCase(Locale.ROOT).replace('_', '-');
    }

    static Type ofWire(String s) {
      try {
        return valueOf(s.toUpperCase(Locale.ROOT).replace('-', '_'));
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException("unknown event type '" + s + "'");
      }
    }
  }

  public Event {
    Objects.requireNonNull(type, "type");
  }

  /** A new event of {@code type}, not yet stamped (seq and at are 0): fill it with the {@code with…} methods. */
  public static Event of(Type type) {
    return new Event(0, 0, type, null, null, null, null, null, null, null, null, null, null);
  }

  public Event stamped(long seq, long at) {
    return new Event(seq, at, type, client, name, token, grant, millis, highest, fault, id, target, detail);
  }

  public Event withClient(String c) {
    return new Event(seq, at, type, c, name, token, grant, millis, highest, fault, id, target, detail);
  }

  public Event withName(String n) {
    return new Event(seq, at, type, client, n, token, grant, millis, highest, fault, id, target, detail);
  }

  public Event withToken(long t) {
    return new Event(seq, at, type, client, name, t, grant, millis, highest, fault, id, target, detail);
  }

  public Event withGrant(long g) {
    return new Event(seq, at, type, client, name, token, g, millis, highest, fault, id, target, detail);
  }

  public Event withMillis(long m) {
    return new Event(seq, at, type, client, name, token, grant, m, highest, fault, id, target, detail);
  }

  public Event withHighest(long h) {
    return new Event(seq, at, type, client, name, token, grant, millis, h, fault, id, target, detail);
  }

  public Event withFault(String kind, long number, String what) {
    return new Event(seq, at, type, client, name, token, grant, millis, highest, kind, number, what, detail);
  }

  public Event withDetail(String d) {
    return new Event(seq, at, type, client, name, token, grant, millis, highest, fault, id, target, d);
  }

  /** The lease this event belongs to: {@code client#grant}, or null. */
  public String lease() {
    return client == null || grant == null ? null : client + "#" + grant;
  }

  /** One line of JSON. */
  public String toJson() {
    return Json.write(fields());
  }

  Map<String, Object> fields() {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("seq", seq);
    m.put("at", at);
    m.put("type", type.wire());
    m.put("client", client);
    m.put("name", name);
    m.put("token", token);
    m.put("grant", grant);
    m.put("millis", millis);
    m.put("highest", highest);
    m.put("fault", fault);
    m.put("id", id);
    m.put("target", target);
    m.put("detail", detail);
    return m;
  }

  /** Reads a line written by {@link #toJson()}. */
  public static Event fromJson(String line) {
    return fromFields(Json.read(line));
  }

  static Event fromFields(Map<String, Object> m) {
    Object type = m.get("type");
    if (!(type instanceof String t)) {
      throw new IllegalArgumentException("an event without a type: " + m);
    }
    return new Event(num(m, "seq", 0L), num(m, "at", 0L), Type.ofWire(t), str(m, "client"), str(m, "name"),
        num(m, "token", null), num(m, "grant", null), num(m, "millis", null), num(m, "highest", null),
        str(m, "fault"), num(m, "id", null), str(m, "target"), str(m, "detail"));
  }

  private static String str(Map<String, Object> m, String k) {
    Object v = m.get(k);
    if (v != null && !(v instanceof String)) {
      throw new IllegalArgumentException("field '" + k + "' is not a string: " + v);
    }
    return (String) v;
  }

  private static Long num(Map<String, Object> m, String k, Long otherwise) {
    Object v = m.get(k);
    if (v == null) {
      return otherwise;
    }
    if (!(v instanceof Long l)) {
      throw new IllegalArgumentException("field '" + k + "' is not an integer: " + v);
    }
    return l;
  }

  /** A short human line: {@code 312  4.210s  c2 grant n1 token=17 #5 waited 120ms}. */
  public String describe() {
    StringBuilder b = new StringBuilder();
    b.append(String.format("%6d %8.3fs  ", seq, at / 1000.0));
    if (type == Type.FAULT_START || type == Type.FAULT_END) {
      b.append(type == Type.FAULT_START ? "fault " : "healed ").append(fault).append(" #").append(id);
      if (target != null) {
        b.append(" on ").append(target);
      }
      if (detail != null) {
        b.append(" (").append(detail).append(')');
      }
      return b.toString();
    }
    if (client != null) {
      b.append(client).append(' ');
    }
    b.append(type.wire());
    if (name != null) {
      b.append(' ').append(name);
    }
    if (token != null) {
      b.append(" token=").append(token);
    }
    if (grant != null) {
      b.append(" lease#").append(grant);
    }
    if (highest != null) {
      b.append(" (highest accepted ").append(highest).append(')');
    }
    if (millis != null) {
      b.append(type == Type.INVOKE ? " maxWait=" : " after ").append(millis).append("ms");
    }
    if (detail != null && type != Type.RUN) {
      b.append(" : ").append(detail);
    }
    return b.toString();
  }
}
