package dev.tumbler.torture;

import dev.tumbler.lock.spi.LockUrl;
import dev.tumbler.torture.backend.Server;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * What a torture run runs against: a backend the harness started itself ({@link Backends#start}), or a user's lock
 * URL ({@link Backends#url}). It says where the clients connect (each client gets a proxy of its own in front of
 * each address, so that a partition cuts one client), which faults apply, and, for a backend of the harness's own,
 * its server processes.
 */
public interface Target extends AutoCloseable {

  /** {@code redis}, {@code zookeeper}, …, or {@code url}. */
  String name();

  /** What it is, for the report: {@code 3 ZooKeeper members (zk-1 127.0.0.1:41234, …)}. */
  String describe();

  /** The lease term the clients run with. */
  Duration leaseTime();

  /**
   * The addresses ({@code host:port}) every client reaches through proxies of its own, in the order
   * {@link #url(List)} takes them; empty when the clients connect directly (then {@link Fault#PARTITION} does not
   * apply).
   */
  List<String> addresses();

  /** The lock URL a client opens, given its proxies' addresses (in the order of {@link #addresses()}). */
  String url(List<String> proxied);

  /** The lock URL for the history: secrets shown as {@code ***}. */
  default String redactedUrl(List<String> proxied) {
    return LockUrl.parse(url(proxied)).toString();
  }

  /** Extra environment of the client processes (a credential they pass to the provider); none by default. */
  default Map<String, String> clientEnvironment() {
    return Map.of();
  }

  /** The faults that apply here. */
  Set<Fault> faults();

  /** Why {@code fault} does not apply here (for an error message), when it does not. */
  String whyNot(Fault fault);

  /** The server processes; none for a target the harness did not start. */
  default List<Server> servers() {
    return List.of();
  }

  /**
   * The server a failover kills: the one that leads or serves the locks now (ZooKeeper's leader, the Redis primary,
   * a cluster master, the native lock server); none by default.
   */
  default Optional<Server> leader() {
    return Optional.empty();
  }

  /**
   * After {@code killed} leads no more: whether another server has taken over (checked until the allowance ends). By
   * default, whether {@link #leader()} names another.
   */
  default boolean tookOver(Server killed) {
    return leader().map(l -> l != killed).orElse(false);
  }

  /**
   * How much longer than a lease term and a holder's work a name may stay unavailable after a fault here: the
   * failover's own time (an election, a replica's promotion, a restart's recovery); 2 s by default.
   */
  default Duration allowance() {
    return Duration.ofSeconds(2);
  }

  @Override
  void close();
}
