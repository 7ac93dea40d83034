package dev.tumbler.torture;

import dev.tumbler.lock.tck.FencedResource;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * The fenced register: the resource the clients write to while they hold a lock, and the recorder of the run.
 *
 * <p>A small TCP server on loopback. Each client process opens one connection, says {@code hello} with its id, then
 * sends one JSON line per thing it does or sees (an acquire invoked, a grant with its token, a write, an
 * {@code onLost}, a release) and waits for the answer. The register gives every line, and every event of the harness
 * (faults, processes started and ended), the next sequence number: the run's one order of "before", the ground
 * truth the {@link Checker} judges by. A write with (name, token) is accepted unless the token is lower than the
 * highest the register has accepted for that name (equal tokens are accepted: one holder writes several times);
 * the answer says which, and a rejected write is a stale write that fencing stopped.
 *
 * <p>Thread safe: one virtual thread per connection, one lock around the sequence and the fenced state.
 */
public final class Register implements AutoCloseable {
  private final History history;
  private final long startNanos;
  private final LineServer server;
  private long seq;
  /** The fenced resource behind each name (the TCK's {@link FencedResource}: equal tokens pass, lower ones do not). */
  private final Map<String, FencedResource<String>> resources = new HashMap<>();
  /** Who holds each name now, by the clients' own reports: for the nemesis to aim at holders. */
  private final Map<String, String> holders = new HashMap<>();
  private final Map<String, String> hellos = new LinkedHashMap<>();
  private final Map<Event.Type, Long> counts = new ConcurrentHashMap<>();

  /**
   * Starts the register on an ephemeral loopback port.
   *
   * @param history where every event goes
   * @param startNanos the run's start on {@link System#nanoTime()}: events are stamped with the time since
   */
  public Register(History history, long startNanos) {
    this.history = history;
    this.startNanos = startNanos;
    this.server = new LineServer("register", Connection::new);
  }

  /** {@code 127.0.0.1:port}, where the clients report. */
  public String address() {
    return server.address();
  }

  /** Records an event of the harness itself (a fault, a process started or ended), and returns it stamped. */
  public synchronized Event record(Event e) {
    return stampAndAppend(e);
  }

  /** The number of events of {@code type} so far. */
  public long count(Event.Type type) {
    return counts.getOrDefault(type, 0L);
  }

  /** The client that holds {@code name} now by its own reports, if any. */
  public synchronized Optional<String> holder(String name) {
    return Optional.ofNullable(holders.get(name));
  }

  /** The clients that hold a name now. */
  public synchronized List<String> holders() {
    return List.copyOf(holders.values());
  }

  /** What {@code client} said in its hello (provider and capabilities), once it has connected. */
  public synchronized Optional<String> hello(String client) {
    return Optional.ofNullable(hellos.get(client));
  }

  /** Waits until {@code client} has said hello, for at most {@code millis}. */
  public synchronized boolean awaitHello(String client, long millis) throws InterruptedException {
    long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
    while (!hellos.containsKey(client)) {
      long left = TimeUnit.NANOSECONDS.toMillis(end - System.nanoTime());
      if (left <= 0) {
        return false;
      }
      wait(Math.min(left, 200));
    }
    return true;
  }

  private Event stampAndAppend(Event e) {
    seq++;
    Event s = e.stamped(seq, TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNanos));
    history.append(s);
    counts.merge(s.type(), 1L, Long::sum);
    switch (s.type()) {
      case GRANT -> holders.put(s.name(), s.client());
      case RELEASE, LOST -> holders.remove(s.name(), s.client());
      case EXIT -> holders.values().removeIf(c -> c.equals(s.client()));
      case HELLO -> {
        hellos.put(s.client(), s.detail() == null ? "" : s.detail());
        notifyAll();
      }
      default -> { }
    }
    return s;
  }

  /** One line from {@code client}: a write is judged; anything else is recorded. Returns the answer. */
  synchronized Map<String, Object> receive(String client, Event e) {
    Map<String, Object> answer = new LinkedHashMap<>();
    Event in = e.withClient(client);
    if (in.type() == Event.Type.WRITE) {
      if (in.name() == null || in.token() == null) {
        throw new IllegalArgumentException("a write without a name or a token");
      }
      FencedResource<String> resource = resources.computeIfAbsent(in.name(), k -> new FencedResource<>());
      if (!resource.write(in.token(), in.lease())) {
        long high = resource.highestToken();
        Event s = stampAndAppend(new Event(0, 0, Event.Type.STALE, client, in.name(), in.token(), in.grant(),
            null, high, null, null, null, null));
        answer.put("seq", s.seq());
        answer.put("ok", false);
        answer.put("highest", high);
        return answer;
      }
      answer.put("seq", stampAndAppend(in).seq());
      answer.put("ok", true);
      return answer;
    }
    if (in.type() == Event.Type.STALE || in.type() == Event.Type.RUN || in.type() == Event.Type.FAULT_START
        || in.type() == Event.Type.FAULT_END || in.type() == Event.Type.SPAWN || in.type() == Event.Type.EXIT) {
      throw new IllegalArgumentException("a client cannot report '" + in.type().wire() + "'");
    }
    answer.put("seq", stampAndAppend(in).seq());
    return answer;
  }

  /** One client's connection: its first line is its hello, which names it. */
  private final class Connection implements java.util.function.UnaryOperator<String> {
    private String client;

    @Override
    public String apply(String line) {
      Map<String, Object> answer;
      try {
        Event e = Event.fromJson(line);
        if (client == null) {
          if (e.type() != Event.Type.HELLO || e.client() == null) {
            throw new IllegalArgumentException("the first line must be a hello with the client's id");
          }
          client = e.client();
        }
        answer = receive(client, e);
      } catch (IllegalArgumentException ex) {
        answer = Map.of("error", ex.getMessage());
      }
      return Json.write(answer);
    }
  }

  @Override
  public void close() {
    server.close();
    history.flush();
  }
}
