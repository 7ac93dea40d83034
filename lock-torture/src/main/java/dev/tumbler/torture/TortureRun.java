package dev.tumbler.torture;

import dev.tumbler.torture.backend.JavaCommand;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * One torture run: the register, the client processes, the nemesis schedule, the history, the checker and the
 * report, against a {@link Target} that the caller opened (and closes).
 *
 * <ol>
 *   <li>The register starts and the history's {@code run} event records the parameters and the bounds.
 *   <li>{@code clients} client processes start and connect ({@link Worker}); the fault phase starts once all have.
 *   <li>For {@code time}, the {@link Nemesis} injects faults with quiet periods between them.
 *   <li>Then the clients run on until each name has been granted after the last fault healed, or has been asked for
 *       and not granted for the recovery bound and a second: the recovery of the last fault is checked too, and its
 *       verdict does not hang on when the run stopped.
 *   <li>The clients are asked to stop (their standard input closed); those that do not within a wait bound and its
 *       slack are killed.
 *   <li>The {@link Checker} reads the history; the {@link Report} writes {@code summary.txt} and {@code report.html}
 *       beside {@code history.jsonl} and the processes' logs.
 * </ol>
 *
 * <p>The bounds, from the lease term T: each acquire waits at most 2T; a wait may return 3 s late (the API's 2 s
 * and 1 s for a busy machine);
 * a holder works up to T/10 between writes (one grant in ten 2 to 5 times that, three times); a paused client's loss must
 * arrive within T/2 + 2 s of waking; a name must be granted again within 2T + the target's allowance + 2 s of a
 * fault's healing.
 */
public final class TortureRun {
  /**
   * How far past its {@code maxWait} an acquire may return: the API's 2 s ({@code Lock.tryAcquire} "returns by
   * maxWait plus 2 s", {@code AbstractLockService.ANSWER_GRACE_MILLIS}: an attempt the backend leaves unanswered is
   * abandoned at that moment, so it returns a little after) and 1 s for a busy machine, as the TCK's outage slack.
   */
  public static final Duration WAIT_SLACK = Duration.ofSeconds(3);

  private TortureRun() {}

  /**
   * What to run.
   *
   * @param clients client processes running at any time (1 to 64)
   * @param names lock names they contend for (1 to 100)
   * @param time the length of the fault phase
   * @param nemeses the faults to inject; null for every fault the target takes
   * @param seed the seed of the random choices (which fault, on whom, how long; each client's names and work)
   * @param reportDir where the history, the report and the processes' logs go (created)
   * @param java how to start the client JVMs
   * @param progress gets a line of progress every {@code progressEvery}, or null
   * @param progressEvery how often
   * @param hold the longest work between two writes of a holder; null for a tenth of the lease term
   */
  public record Settings(int clients, int names, Duration time, Set<Fault> nemeses, long seed, Path reportDir,
      JavaCommand java, Consumer<String> progress, Duration progressEvery, Duration hold) {
    public Settings {
      Objects.requireNonNull(time, "time");
      Objects.requireNonNull(reportDir, "reportDir");
      Objects.requireNonNull(java, "java");
      if (clients < 1 || clients > 64) {
        throw new IllegalArgumentException("clients must be 1 to 64: " + clients);
      }
      if (names < 1 || names > 100) {
        throw new IllegalArgumentException("names must be 1 to 100: " + names);
      }
      if (time.isNegative() || time.isZero()) {
        throw new IllegalArgumentException("time must be positive: " + time);
      }
      nemeses = nemeses == null ? null : Set.copyOf(nemeses);
    }
  }

  /**
   * What a run found, and where it wrote it.
   *
   * @param analysis the checker's findings
   * @param reportDir the report directory
   * @param summary the text summary (also in {@code summary.txt})
   * @param aborted why the fault phase ended early (a server that did not come back), or null
   */
  public record Result(Checker.Analysis analysis, Path reportDir, String summary, String aborted) {}

  /**
   * The faults of {@code requested} that {@code target} does not take, as an error message; null if it takes all.
   */
  public static String checkFaults(Target target, Set<Fault> requested) {
    List<String> why = new ArrayList<>();
    for (Fault f : requested) {
      if (!target.faults().contains(f)) {
        why.add(target.whyNot(f));
      }
    }
    return why.isEmpty() ? null : String.join("; ", why);
  }

  /**
   * Runs against {@code target}.
   *
   * @throws IllegalArgumentException if a fault asked for does not apply to the target
   * @throws IllegalStateException if a client could not start or connect (its log's tail in the message)
   */
  public static Result run(Target target, Settings s) throws InterruptedException {
    Set<Fault> nemeses = s.nemeses() == null ? target.faults() : s.nemeses();
    String bad = checkFaults(target, nemeses);
    if (bad != null) {
      throw new IllegalArgumentException(bad);
    }
    try {
      Files.createDirectories(s.reportDir());
    } catch (IOException e) {
      throw new UncheckedIOException("cannot create the report directory " + s.reportDir(), e);
    }
    Duration lease = target.leaseTime();
    Duration maxWait = lease.multipliedBy(2);
    long hold = s.hold() != null ? s.hold().toMillis() : Math.max(20, lease.toMillis() / 10);
    Duration wakeSlack = lease.dividedBy(2).plus(Duration.ofSeconds(2));
    Duration recovery = lease.multipliedBy(2).plus(target.allowance()).plus(Duration.ofSeconds(2));
    List<String> names = new ArrayList<>();
    for (int i = 0; i < s.names(); i++) {
      names.add("n" + i);
    }
    SplittableRandom random = new SplittableRandom(s.seed());
    long t0 = System.nanoTime();
    History history = new History(s.reportDir().resolve(History.FILE));
    Register register = new Register(history, t0);
    Clients clients = new Clients(target, register, s.java(), names, maxWait, hold, s.reportDir().resolve("clients"),
        random.nextLong());
    Nemesis nemesis = new Nemesis(target, clients, register, nemeses.stream().sorted().toList(), random.split());
    Thread progress = null;
    String aborted = null;
    try {
      RunParameters params = new RunParameters(target.name(), target.describe(),
          target.redactedUrl(target.addresses()), s.clients(), s.names(), s.time().toMillis(), Fault.labels(nemeses),
          s.seed(), lease.toMillis(), maxWait.toMillis(), WAIT_SLACK.toMillis(), wakeSlack.toMillis(),
          recovery.toMillis(), target.allowance().toMillis());
      register.record(Event.of(Event.Type.RUN).withDetail(params.toDetail()));
      List<Clients.Client> first = new ArrayList<>();
      for (int i = 0; i < s.clients(); i++) {
        first.add(clients.spawn());
      }
      for (Clients.Client c : first) {
        awaitHello(register, clients, c);
      }
      long phaseStart = System.nanoTime();
      long phaseEnd = phaseStart + s.time().toNanos();
      if (s.progress() != null) {
        progress = Thread.ofPlatform().daemon().name("torture-progress").start(() -> report(s, target, register,
            clients, nemesis, phaseStart, phaseEnd));
      }
      try {
        nemesis.run(phaseEnd);
        awaitRecovered(history, names, nemesis.lastHealed(), recovery.plusSeconds(1));
      } catch (IllegalStateException | java.io.UncheckedIOException e) {
        // a server that did not come back: the run so far is still worth checking
        aborted = "the fault phase ended early: " + e.getMessage();
      }
      clients.stopAll(maxWait.plus(WAIT_SLACK).plusSeconds(5));
    } finally {
      if (progress != null) {
        progress.interrupt();
      }
      clients.killAll();
      register.close();
      history.close();
    }
    Checker.Analysis analysis = Checker.check(history.events());
    String summary = Report.write(s.reportDir(), analysis);
    return new Result(analysis, s.reportDir(), aborted == null ? summary : summary + "\n" + aborted + "\n", aborted);
  }

  private static void awaitHello(Register register, Clients clients, Clients.Client c) throws InterruptedException {
    long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
    while (!register.awaitHello(c.id, 200)) {
      if (!c.process.isAlive()) {
        throw new IllegalStateException("client " + c.id + " exited (code " + c.process.exitValue() + ") before it "
            + "connected:\n" + clients.tail(c.id, 20));
      }
      if (System.nanoTime() - end > 0) {
        throw new IllegalStateException("client " + c.id + " did not connect within 120 s:\n" + clients.tail(c.id, 20));
      }
    }
  }

  /**
   * Waits until the recovery of the last fault is decided for every name, so that the checker's verdict does not hang
   * on when the run stopped: a name is decided once granted after {@code healed}, or once it has been asked for
   * (pending when the fault healed, or asked after; the checker's rule) and {@code decide} has passed since this loop
   * saw that. A name nobody asks for is waited for at most three times {@code decide}. With no fault ({@code healed}
   * null), waits until every name has been granted once more, for at most {@code decide}.
   */
  static void awaitRecovered(History history, List<String> names, Event healed, Duration decide)
      throws InterruptedException {
    long since = healed == null ? history.size() == 0 ? 0 : history.events().getLast().seq() : healed.seq();
    long start = System.nanoTime();
    long end = start + (healed == null ? decide.toNanos() : decide.toNanos() * 3);
    Map<String, Long> asked = new HashMap<>();
    Thread.sleep(1000);
    while (System.nanoTime() - end < 0) {
      List<Event> events = history.events();
      Set<String> granted = new HashSet<>();
      for (Event e : events) {
        if (e.seq() > since && e.type() == Event.Type.GRANT) {
          granted.add(e.name());
        }
      }
      boolean decided = true;
      for (String n : names) {
        if (granted.contains(n)) {
          continue;
        }
        if (healed != null && !asked.containsKey(n)
            && Checker.demandAfter(events, n, healed, events.getLast()) != null) {
          asked.put(n, System.nanoTime());
        }
        Long seen = asked.get(n);
        if (seen == null || System.nanoTime() - seen - decide.toNanos() < 0) {
          decided = false;
        }
      }
      if (decided) {
        return;
      }
      Thread.sleep(200);
    }
  }

  private static void report(Settings s, Target target, Register register, Clients clients, Nemesis nemesis,
      long phaseStart, long phaseEnd) {
    try {
      while (true) {
        Thread.sleep(s.progressEvery().toMillis());
        long now = System.nanoTime();
        long done = TimeUnit.NANOSECONDS.toSeconds(Math.min(now, phaseEnd) - phaseStart);
        String phase = now - phaseEnd < 0 ? done + "/" + s.time().toSeconds() + " s" : "checking recovery, stopping";
        s.progress().accept(String.format("torture %s: %s, %d clients, %d grants, %d writes, %d stale rejected, "
                + "%d lost, %d faults (%s)", target.name(), phase, clients.live().size(),
            register.count(Event.Type.GRANT), register.count(Event.Type.WRITE), register.count(Event.Type.STALE),
            register.count(Event.Type.LOST), nemesis.faults(), nemesis.now()));
      }
    } catch (InterruptedException e) {
      // the run is over
    }
  }
}
