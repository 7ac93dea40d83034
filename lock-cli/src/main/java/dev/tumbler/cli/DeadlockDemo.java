package dev.tumbler.cli;

import dev.tumbler.lock.DeadlockException;
import dev.tumbler.lock.LeaseLostEvent;
import dev.tumbler.lock.LockMode;
import dev.tumbler.lock.LockService;
import dev.tumbler.lock.LockTransaction;
import dev.tumbler.lock.TransactionOptions;
import dev.tumbler.peer.provider.LoopbackCluster;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * {@code tumbler demo --scenario deadlock}: transactions that deadlock on purpose over a native cluster on loopback
 * TCP, one per node. Each takes one account ({@code [acct, a]}, {@code [acct, b]}, …), then asks for the next
 * node's, so that they wait for each other in a ring. The agents find the cycle among themselves, with no central
 * graph, and break it twice: first by surrender (the youngest transaction gives its account up, hears it lost as
 * {@code DEADLOCK}, and waits for it again: every transaction ends with both accounts), then with
 * {@code abortOnDeadlock} (the youngest aborts with {@link DeadlockException}; the others get both). A table shows
 * what each transaction held, asked for, gave up and got, and checks that no account had two holders at once and
 * that an account granted again came back with a larger fencing token.
 */
final class DeadlockDemo {

  /** How long a transaction may take to get both accounts: the cycle is broken well within it. */
  private static final Duration AWAIT = Duration.ofSeconds(30);
  /** How long a transaction that got both holds them (checked for overlap meanwhile). */
  private static final long HOLD_MILLIS = 50;
  /** The lease term of the cluster's locks. */
  private static final String PARAMETERS = "&leaseTime=5s";

  private record Row(String round, String tx, int node, List<String> first, List<String> then, String outcome,
      long millis, List<String> gaveUp, Map<List<String>, Long> tokens) {}

  private DeadlockDemo() {}

  /** Runs both rounds on {@code algorithm} with {@code nodes} members; prints the table; returns the exit code. */
  static int run(String algorithm, int nodes, PrintWriter out, PrintWriter err) throws Exception {
    List<Row> rows = new ArrayList<>();
    List<String> failures = new ArrayList<>();
    for (boolean abort : new boolean[] {false, true}) {
      String round = abort ? "abort" : "surrender";
      err.printf("deadlock demo (%s): %d transactions, one per node, each holding an account and asking for the "
          + "next; round %s ...%n", algorithm, nodes, round);
      err.flush();
      try (LoopbackCluster cluster = LoopbackCluster.open(algorithm, nodes, PARAMETERS)) {
        rows.addAll(round(cluster.services(), abort, failures));
      }
    }
    out.println();
    out.printf("tumbler demo --scenario deadlock: %d transactions on %d %s nodes over TCP on loopback; each holds%n"
        + "one account, then asks for the next node's, so that they wait for each other in a ring%n%n",
        nodes, nodes, algorithm);
    out.print(table(rows));
    out.println();
    if (failures.isEmpty()) {
      out.println("checks: one holder per account at a time; an account granted again came back with a larger token;");
      out.println("        surrender: every transaction got both accounts; abort: exactly one aborted, the others got both");
      out.flush();
      return ExitCodes.OK;
    }
    for (String f : failures) {
      out.println("FAILED: " + f);
    }
    out.flush();
    return ExitCodes.CHECK_FAILED;
  }

  private static List<Row> round(List<LockService> services, boolean abort, List<String> failures)
      throws Exception {
    int n = services.size();
    String round = abort ? "abort" : "surrender";
    TransactionOptions options = TransactionOptions.defaults().withAbortOnDeadlock(abort);
    List<LockTransaction> txs = new ArrayList<>();
    List<List<LeaseLostEvent>> lost = new ArrayList<>();
    List<List<String>> accounts = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      accounts.add(List.of("acct", String.valueOf((char) ('a' + i))));
    }
    // the first account of each, begun in node order (so the last begun is the youngest)
    for (int i = 0; i < n; i++) {
      LockTransaction t = services.get(i).beginTransaction(options).lock(LockMode.WRITE, accounts.get(i));
      List<LeaseLostEvent> events = new CopyOnWriteArrayList<>();
      t.onLost(events::add);
      if (!t.await(AWAIT)) {
        failures.add(round + ": T" + (i + 1) + " did not get its free account " + accounts.get(i));
      }
      txs.add(t);
      lost.add(events);
    }
    Map<List<String>, Long> firstTokens = new TreeMap<>(DeadlockDemo::compare);
    for (LockTransaction t : txs) {
      firstTokens.putAll(t.fencingTokens());
    }
    // then each asks for the next one's: a ring of waits
    Map<List<String>, AtomicInteger> holders = new ConcurrentHashMap<>();
    AtomicBoolean overlap = new AtomicBoolean();
    List<Thread> threads = new ArrayList<>();
    Row[] result = new Row[n];
    long start = System.nanoTime();
    for (int i = 0; i < n; i++) {
      int k = i;
      List<String> next = accounts.get((i + 1) % n);
      txs.get(i).lock(LockMode.WRITE, next);
      threads.add(Thread.ofVirtual().name("deadlock-demo-T" + (i + 1)).start(() -> {
        LockTransaction t = txs.get(k);
        String outcome;
        Map<List<String>, Long> tokens = Map.of();
        try {
          if (t.await(AWAIT)) {
            tokens = t.fencingTokens();
            for (List<String> a : tokens.keySet()) {
              if (holders.computeIfAbsent(a, x -> new AtomicInteger()).incrementAndGet() != 1) {
                overlap.set(true);
              }
            }
            Thread.sleep(HOLD_MILLIS);
            for (List<String> a : tokens.keySet()) {
              holders.get(a).decrementAndGet();
            }
            outcome = "got both";
          } else {
            outcome = "timed out after " + AWAIT.toSeconds() + "s";
          }
        } catch (DeadlockException e) {
          outcome = "aborted (DeadlockException)";
        } catch (InterruptedException e) {
          outcome = "interrupted";
        } catch (RuntimeException e) {
          outcome = "failed: " + e.getClass().getSimpleName();
        } finally {
          t.close();
        }
        long millis = (System.nanoTime() - start) / 1_000_000;
        List<String> gaveUp = lost.get(k).stream().map(e -> "[" + e.name().replace('/', ',') + "] " + e.reason())
            .toList();
        result[k] = new Row(round, "T" + (k + 1), k + 1, accounts.get(k), next, outcome, millis, gaveUp, tokens);
      }));
    }
    for (Thread t : threads) {
      t.join();
    }
    List<Row> rows = List.of(result);
    long got = rows.stream().filter(r -> r.outcome().equals("got both")).count();
    long aborted = rows.stream().filter(r -> r.outcome().startsWith("aborted")).count();
    if (overlap.get()) {
      failures.add(round + ": two transactions held one account at once");
    }
    if (!abort && got != n) {
      failures.add(round + ": " + got + " of " + n + " transactions got both accounts");
    }
    if (abort && (aborted != 1 || got != n - 1)) {
      failures.add(round + ": " + aborted + " aborted and " + got + " got both, of " + n);
    }
    for (Row r : rows) {
      for (Map.Entry<List<String>, Long> e : r.tokens().entrySet()) {
        Long before = firstTokens.get(e.getKey());
        boolean own = e.getKey().equals(r.first());
        if (before != null && !own && e.getValue() <= before) {
          failures.add(round + ": " + r.tx() + " got " + e.getKey() + " with token " + e.getValue()
              + ", not above the first holder's " + before);
        }
      }
    }
    return rows;
  }

  private static int compare(List<String> a, List<String> b) {
    return String.join("/", a).compareTo(String.join("/", b));
  }

  private static String table(List<Row> rows) {
    List<String[]> cells = new ArrayList<>();
    cells.add(new String[] {"round", "tx", "node", "holds", "then asks", "outcome", "took", "gave up (onLost)",
        "tokens at the end (hex)"});
    for (Row r : rows) {
      StringBuilder tokens = new StringBuilder();
      r.tokens().entrySet().stream().sorted((x, y) -> compare(x.getKey(), y.getKey()))
          .forEach(e -> tokens.append(tokens.length() == 0 ? "" : " ").append(path(e.getKey())).append('=')
              .append(Long.toHexString(e.getValue())));
      cells.add(new String[] {r.round(), r.tx(), String.valueOf(r.node()), path(r.first()), path(r.then()),
          r.outcome(), r.millis() + " ms", r.gaveUp().isEmpty() ? "-" : String.join(", ", r.gaveUp()),
          tokens.length() == 0 ? "-" : tokens.toString()});
    }
    return TextTable.render(cells, "  ", false);
  }

  private static String path(List<String> p) {
    return "[" + String.join(",", p) + "]";
  }
}
