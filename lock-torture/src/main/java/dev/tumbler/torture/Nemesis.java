package dev.tumbler.torture;

import dev.tumbler.lock.tck.TcpProxy;
import dev.tumbler.torture.backend.Processes;
import dev.tumbler.torture.backend.Server;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

/**
 * The fault schedule: a quiet period (half a lease term to one and a half), then one fault drawn from the run's list,
 * then quiet again, until the fault phase ends; one fault at a time, each healed before the next. A fault on a client
 * hits a holder half the time (the register knows who holds what) and any running client otherwise.
 *
 * <ul>
 *   <li>kill: SIGKILL, then a new client in its place;
 *   <li>pause: SIGSTOP for 1.5 to 2 lease terms, then SIGCONT;
 *   <li>partition: the client's proxies drop every byte both ways for 1.5 to 2 terms, then forward again (closing the
 *       connections that lived through it);
 *   <li>restart: SIGKILL a server, wait half a term to a term, start it again;
 *   <li>pause-server: SIGSTOP a server (PostgreSQL with its backends) for 1.5 to 2 terms, then SIGCONT;
 *   <li>failover: SIGKILL the server that leads or serves the locks, wait until another has taken over (at most the
 *       target's allowance and a term), then half a term to a term, then start it again.
 * </ul>
 *
 * Each fault is a {@code fault-start} and a {@code fault-end} event in the history, the start before the fault takes
 * effect, the end after it is healed, except for a paused client: its end is recorded before SIGCONT, so that
 * nothing it does on waking comes before it.
 */
final class Nemesis {
  private final Target target;
  private final Clients clients;
  private final Register register;
  private final List<Fault> faults;
  private final Duration lease;
  private final SplittableRandom random;
  private long count;
  private volatile String now = "quiet";
  private volatile Event lastHealed;

  Nemesis(Target target, Clients clients, Register register, List<Fault> faults, SplittableRandom random) {
    this.target = target;
    this.clients = clients;
    this.register = register;
    this.faults = List.copyOf(faults);
    this.lease = target.leaseTime();
    this.random = random;
  }

  /** What the nemesis does now, for the progress line. */
  String now() {
    return now;
  }

  long faults() {
    return count;
  }

  /** The last {@code fault-end} event, or null. */
  Event lastHealed() {
    return lastHealed;
  }

  /** Injects faults until {@code deadline} (on {@link System#nanoTime()}); a fault under way is finished. */
  void run(long deadline) throws InterruptedException {
    if (faults.isEmpty()) {
      sleepUntil(deadline);
      return;
    }
    while (deadline - System.nanoTime() > 0) {
      now = "quiet";
      long quiet = lease.toMillis() / 2 + random.nextLong(lease.toMillis() + 1);
      long until = Math.min(deadline, System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(quiet));
      sleepUntil(until);
      if (deadline - System.nanoTime() <= 0) {
        break;
      }
      inflict(faults.get(random.nextInt(faults.size())));
    }
    now = "quiet";
  }

  private static void sleepUntil(long deadline) throws InterruptedException {
    long left;
    while ((left = deadline - System.nanoTime()) > 0) {
      TimeUnit.NANOSECONDS.sleep(left);
    }
  }

  /** 1.5 to 2 lease terms: longer than a term, so that a lease runs out. */
  private long outage() {
    return lease.toMillis() * 3 / 2 + random.nextLong(lease.toMillis() / 2 + 1);
  }

  private long downtime() {
    return lease.toMillis() / 2 + random.nextLong(lease.toMillis() / 2 + 1);
  }

  void inflict(Fault f) throws InterruptedException {
    long id = ++count;
    switch (f) {
      case KILL -> {
        Clients.Client c = pickClient();
        if (c == null) {
          return;
        }
        now = "kill " + c.id;
        start(f, id, c.id, null);
        Processes.kill(c.process);
        Clients.Client fresh = clients.spawn();
        end(f, id, c.id, "replaced by " + fresh.id);
      }
      case PAUSE -> {
        Clients.Client c = pickClient();
        if (c == null) {
          return;
        }
        now = "pause " + c.id;
        long ms = outage();
        start(f, id, c.id, ms + " ms");
        Processes.pause(List.of(c.process.pid()));
        Thread.sleep(ms);
        end(f, id, c.id, null);
        Processes.resume(List.of(c.process.pid()));
      }
      case PARTITION -> {
        Clients.Client c = pickClient();
        if (c == null) {
          return;
        }
        now = "partition " + c.id;
        long ms = outage();
        start(f, id, c.id, ms + " ms");
        c.proxies.forEach(TcpProxy::blackhole);
        Thread.sleep(ms);
        c.proxies.forEach(TcpProxy::heal);
        end(f, id, c.id, null);
      }
      case RESTART -> {
        Server s = pickServer();
        now = "restart " + s.id();
        long ms = downtime();
        start(f, id, s.id(), "down " + ms + " ms");
        s.kill();
        Thread.sleep(ms);
        String back = bringBack(s);
        end(f, id, s.id(), back);
      }
      case PAUSE_SERVER -> {
        Server s = pickServer();
        now = "pause-server " + s.id();
        long ms = outage();
        start(f, id, s.id(), ms + " ms");
        s.pause();
        Thread.sleep(ms);
        s.resume();
        end(f, id, s.id(), null);
      }
      case FAILOVER -> {
        Optional<Server> leader = target.leader();
        Server s = leader.orElseGet(this::pickServer);
        now = "failover " + s.id();
        start(f, id, s.id(), leader.isPresent() ? "the leader" : "no leader found: a server");
        long t0 = System.nanoTime();
        s.kill();
        long bound = t0 + target.allowance().plus(lease).toNanos();
        boolean tookOver = false;
        while (System.nanoTime() - bound < 0 && !(tookOver = target.tookOver(s))) {
          Thread.sleep(100);
        }
        long took = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
        Thread.sleep(downtime());
        String back = bringBack(s);
        end(f, id, s.id(), (tookOver ? "another took over after " + took + " ms" : "no other took over within "
            + took + " ms") + (back == null ? "" : "; " + back));
      }
      default -> throw new IllegalStateException(f.toString());
    }
    now = "quiet";
  }

  /** Starts a killed server again; a second try if the first fails; null if it came back at once. */
  private String bringBack(Server s) {
    try {
      s.start();
      return null;
    } catch (RuntimeException first) {
      s.start();
      return "came back at the second try (" + first.getMessage() + ")";
    }
  }

  private void start(Fault f, long id, String on, String detail) {
    Event e = Event.of(Event.Type.FAULT_START).withFault(f.label(), id, on);
    register.record(detail == null ? e : e.withDetail(detail));
  }

  private void end(Fault f, long id, String on, String detail) {
    Event e = Event.of(Event.Type.FAULT_END).withFault(f.label(), id, on);
    lastHealed = register.record(detail == null ? e : e.withDetail(detail));
  }

  /** A holder half the time, else any running client; null if none runs. */
  private Clients.Client pickClient() {
    List<Clients.Client> live = clients.live();
    if (live.isEmpty()) {
      return null;
    }
    if (random.nextBoolean()) {
      List<Clients.Client> holding = new ArrayList<>();
      for (String h : register.holders()) {
        Clients.Client c = clients.byId(h);
        if (c != null) {
          holding.add(c);
        }
      }
      if (!holding.isEmpty()) {
        return holding.get(random.nextInt(holding.size()));
      }
    }
    return live.get(random.nextInt(live.size()));
  }

  private Server pickServer() {
    List<Server> running = target.servers().stream().filter(Server::isRunning).toList();
    List<Server> from = running.isEmpty() ? target.servers() : running;
    return from.get(random.nextInt(from.size()));
  }
}
