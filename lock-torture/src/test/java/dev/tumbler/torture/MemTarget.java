package dev.tumbler.torture;

import java.time.Duration;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;

/** A {@link MemLockServer} in this JVM as a torture target: client faults only; the URL gives each name its defect. */
final class MemTarget implements Target {
  private final MemLockServer server;
  private final Duration lease;
  private final String defects;

  /** @param defects {@code name:defect,…} */
  MemTarget(MemLockServer server, Duration lease, String defects) {
    this.server = server;
    this.lease = lease;
    this.defects = defects;
  }

  @Override
  public String name() {
    return "torture-mem";
  }

  @Override
  public String describe() {
    return "a lock server in the test's JVM (" + server.address() + "), defects " + (defects.isEmpty() ? "none" : defects);
  }

  @Override
  public Duration leaseTime() {
    return lease;
  }

  @Override
  public List<String> addresses() {
    return List.of(server.address());
  }

  @Override
  public String url(List<String> proxied) {
    return "lock:torture-mem://" + proxied.getFirst() + "?leaseTime=" + lease.toMillis() + "ms"
        + (defects.isEmpty() ? "" : "&defects=" + defects);
  }

  @Override
  public Set<Fault> faults() {
    return EnumSet.of(Fault.KILL, Fault.PAUSE, Fault.PARTITION);
  }

  @Override
  public String whyNot(Fault fault) {
    return faults().contains(fault) ? null : fault.label() + " does not apply to the in-JVM test server";
  }

  @Override
  public void close() {
    server.close();
  }
}
