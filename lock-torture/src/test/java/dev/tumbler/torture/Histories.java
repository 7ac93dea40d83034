package dev.tumbler.torture;

import dev.tumbler.torture.Event.Type;
import java.util.ArrayList;
import java.util.List;

/** Hand-written histories for the checker's tests: events stamped in the order they are added. */
final class Histories {
  static final String ALL = "provider=test;capabilities=MUTEX,FENCING,LEASE_EXPIRY,LOST_NOTIFICATION,FAULT_TOLERANT";
  static final RunParameters RUN = new RunParameters("test", "hand-written", "lock:test://x", 3, 2, 60_000,
      List.of("kill", "pause", "partition", "restart"), 1, 1000, 2000, 2000, 2500, 6000, 2000);

  private final List<Event> events = new ArrayList<>();
  private long seq;
  private long at;

  /** A history whose clients c1, c2, c3 declare {@code hello} (a {@code provider=…;capabilities=…} line). */
  Histories(String hello) {
    add(Event.of(Type.RUN).withDetail(RUN.toDetail()));
    for (String c : List.of("c1", "c2", "c3")) {
      add(Event.of(Type.SPAWN).withClient(c));
      add(Event.of(Type.HELLO).withClient(c).withDetail(hello));
    }
  }

  Histories() {
    this(ALL);
  }

  /** From now on, events are stamped {@code ms} milliseconds into the run. */
  Histories at(long ms) {
    at = ms;
    return this;
  }

  Histories add(Event e) {
    events.add(e.stamped(++seq, at));
    at += 1;
    return this;
  }

  long lastSeq() {
    return seq;
  }

  Histories invoke(String c, String n) {
    return add(Event.of(Type.INVOKE).withClient(c).withName(n).withMillis(RUN.maxWaitMillis()));
  }

  Histories grant(String c, String n, long token, long grant) {
    return add(Event.of(Type.GRANT).withClient(c).withName(n).withToken(token).withGrant(grant).withMillis(5));
  }

  /** An acquire that waited {@code waited} ms and ended with {@code type} (grant, timeout, fail). */
  Histories completed(Type type, String c, String n, long waited) {
    Event e = Event.of(type).withClient(c).withName(n).withMillis(waited);
    return add(type == Type.GRANT ? e.withToken(99).withGrant(99) : e);
  }

  Histories write(String c, String n, long token, long grant) {
    return add(Event.of(Type.WRITE).withClient(c).withName(n).withToken(token).withGrant(grant));
  }

  Histories stale(String c, String n, long token, long grant, long highest) {
    return add(Event.of(Type.STALE).withClient(c).withName(n).withToken(token).withGrant(grant).withHighest(highest));
  }

  Histories lost(String c, String n, long token, long grant) {
    return add(Event.of(Type.LOST).withClient(c).withName(n).withToken(token).withGrant(grant)
        .withDetail("EXPIRED: test"));
  }

  Histories release(String c, String n, long token, long grant) {
    add(Event.of(Type.RELEASE).withClient(c).withName(n).withToken(token).withGrant(grant));
    return add(Event.of(Type.RELEASED).withClient(c).withName(n).withToken(token).withGrant(grant));
  }

  Histories faultStart(String kind, long id, String target) {
    return add(Event.of(Type.FAULT_START).withFault(kind, id, target));
  }

  Histories faultEnd(String kind, long id, String target) {
    return add(Event.of(Type.FAULT_END).withFault(kind, id, target));
  }

  Histories exit(String c) {
    return add(Event.of(Type.EXIT).withClient(c).withDetail("exit code 137"));
  }

  Histories bye(String c) {
    return add(Event.of(Type.BYE).withClient(c));
  }

  List<Event> events() {
    return List.copyOf(events);
  }

  Checker.Analysis check() {
    return Checker.check(events);
  }
}
