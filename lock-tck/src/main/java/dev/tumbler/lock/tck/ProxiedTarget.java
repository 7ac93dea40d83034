package dev.tumbler.lock.tck;

import dev.tumbler.lock.LockService;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * A {@link TckTarget} for a TCP backend that is its own {@link FaultInjector}: every client it opens
 * reaches the backend through its own {@link TcpProxy}s ({@link ProxiedClients}), so
 * {@link Fault#CUT_OFF_CLIENT} blackholes one client, and {@link Fault#PAUSE_RENEWALS} pauses its renewer.
 * A subclass says where the backend is and how to connect; it adds {@link Fault#CRASH_BACKEND} by
 * overriding {@link #supported()}, {@link #crashBackend()} and {@link #restartBackend()}, and stops its
 * servers in {@link #closeBackend()}.
 *
 * <pre>{@code
 * final class AcmeTarget extends ProxiedTarget {
 *   protected List<String> backend() { return List.of("127.0.0.1:" + server.port()); }
 *   protected LockService connect(List<String> addresses) {
 *     return LockProviders.connect("lock:acme://" + String.join(",", addresses) + "?leaseTime=2s");
 *   }
 *   ...
 * }
 * }</pre>
 */
public abstract class ProxiedTarget implements TckTarget, FaultInjector {
  private final ProxiedClients clients = new ProxiedClients();

  /** The backend's addresses, {@code host:port} each. */
  protected abstract List<String> backend();

  /** Opens a service on the given addresses (the proxies', in the order of {@link #backend()}). */
  protected abstract LockService connect(List<String> addresses);

  /** Stops the backend; called once by {@link #close()}, after every proxy is closed. */
  protected abstract void closeBackend();

  @Override
  public final LockService open() {
    return clients.open(backend(), this::connect);
  }

  @Override
  public Optional<FaultInjector> faults() {
    return Optional.of(this);
  }

  /** {@link Fault#CUT_OFF_CLIENT} and {@link Fault#PAUSE_RENEWALS}; override to add {@link Fault#CRASH_BACKEND}. */
  @Override
  public Set<Fault> supported() {
    return Set.of(Fault.CUT_OFF_CLIENT, Fault.PAUSE_RENEWALS);
  }

  /** Each client reaches the backend through proxies, a session and renewals of its own: its faults stay with it. */
  @Override
  public boolean isolatesClients() {
    return true;
  }

  @Override
  public final void cutOff(LockService client) {
    clients.cutOff(client);
  }

  @Override
  public final void heal(LockService client) {
    clients.heal(client);
  }

  /**
   * Partitions the backend server at {@code index} (of {@link #backend()}) away from every client: for a
   * subclass's {@link #partitionMinority}. Servers that talk to each other directly are not cut from each
   * other by this.
   */
  protected final void partitionFromClients(int index) {
    clients.partition(index);
  }

  /** Undoes {@link #partitionFromClients}: for a subclass's {@link #healMinority}. */
  protected final void healPartitions() {
    clients.healPartitions();
  }

  @Override
  public final void close() {
    clients.close();
    closeBackend();
  }
}
