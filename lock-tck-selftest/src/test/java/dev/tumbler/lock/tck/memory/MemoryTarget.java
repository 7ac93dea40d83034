package dev.tumbler.lock.tck.memory;

import dev.tumbler.lock.LockProviders;
import dev.tumbler.lock.LockService;
import dev.tumbler.lock.tck.FaultInjector;
import dev.tumbler.lock.tck.TckTarget;
import java.time.Duration;
import java.util.EnumSet;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;

/** A {@link TckTarget} for a fresh in-memory server, correct or with one {@link Defect}. */
public final class MemoryTarget implements TckTarget, FaultInjector {
  private final String server = "tck-" + UUID.randomUUID();
  private final Duration leaseTime;
  private final Defect defect;

  public MemoryTarget(Defect defect, Duration leaseTime) {
    this.defect = defect;
    this.leaseTime = leaseTime;
  }

  /**
   * With a 1.5 s term: the client stops trusting a lease 375 ms before the server can expire it, a margin
   * the lease-loss ordering tests need on a loaded 2-core machine (at 1 s it was 250 ms, and a renewer
   * thread woken late under load once made the correct provider fail them).
   */
  public MemoryTarget(Defect defect) {
    this(defect, Duration.ofMillis(1500));
  }

  @Override
  public Optional<String> url() {
    return Optional.of("lock:tck-memory:" + server + "?leaseTime=" + leaseTime.toMillis() + "ms"
        + (defect == Defect.NONE ? "" : "&defect=" + defect.name().toLowerCase().replace('_', '-')));
  }

  @Override
  public LockService open() {
    return LockProviders.connect(url().orElseThrow());
  }

  @Override
  public Duration leaseTime() {
    return leaseTime;
  }

  @Override
  public Optional<FaultInjector> faults() {
    return Optional.of(this);
  }

  @Override
  public Set<Fault> supported() {
    return EnumSet.of(Fault.CUT_OFF_CLIENT, Fault.PAUSE_RENEWALS, Fault.CRASH_MINORITY, Fault.PARTITION_MINORITY);
  }

  /** Each client reaches the backend through proxies, a session and renewals of its own: its faults stay with it. */
  @Override
  public boolean isolatesClients() {
    return true;
  }

  @Override
  public void crashMinority(java.util.Collection<LockService> spare) {
    MemoryServer.get(server).minorityFault(true);
  }

  @Override
  public void restartMinority() {
    MemoryServer.get(server).minorityFault(false);
  }

  @Override
  public void partitionMinority(java.util.Collection<LockService> spare) {
    MemoryServer.get(server).minorityFault(true);
  }

  @Override
  public void healMinority() {
    MemoryServer.get(server).minorityFault(false);
  }

  private static MemoryService memory(LockService s) {
    return s.unwrap(MemoryService.class);
  }

  @Override
  public void cutOff(LockService client) {
    MemoryService m = memory(client);
    m.server().cutOff(m.client());
  }

  @Override
  public void heal(LockService client) {
    MemoryService m = memory(client);
    m.server().heal(m.client());
  }

  @Override
  public void pauseRenewals(LockService client) {
    memory(client).renewer().pause();
  }

  @Override
  public void resumeRenewals(LockService client) {
    memory(client).renewer().resume();
  }

  @Override
  public void close() {
    MemoryServer.stop(server);
  }
}
