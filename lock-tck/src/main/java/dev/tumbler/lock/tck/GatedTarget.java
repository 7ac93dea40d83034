package dev.tumbler.lock.tck;

import dev.tumbler.lock.LockService;
import java.time.Duration;
import java.util.Collection;
import java.util.Optional;
import java.util.Set;

/**
 * The target as one test sees it: the same target, whose fault injector first takes the {@link FaultGate} whole for
 * the test when a fault may reach other tests' clients (every fault, unless the injector says its client faults
 * stay with the client given: {@link FaultInjector#isolatesClients()}).
 */
record GatedTarget(TckTarget target, FaultGate.Hold hold) implements TckTarget {

  @Override
  public LockService open() {
    return target.open();
  }

  @Override
  public Duration leaseTime() {
    return target.leaseTime();
  }

  @Override
  public Optional<String> url() {
    return target.url();
  }

  @Override
  public Optional<FaultInjector> faults() {
    return target.faults().map(f -> new Gated(f, hold));
  }

  @Override
  public void close() {
    target.close();
  }

  private record Gated(FaultInjector f, FaultGate.Hold hold) implements FaultInjector {
    private void client() {
      if (!f.isolatesClients()) {
        hold.exclusive();
      }
    }

    @Override
    public Set<Fault> supported() {
      return f.supported();
    }

    @Override
    public boolean isolatesClients() {
      return f.isolatesClients();
    }

    @Override
    public void cutOff(LockService client) {
      client();
      f.cutOff(client);
    }

    @Override
    public void heal(LockService client) {
      f.heal(client);
    }

    @Override
    public void pauseRenewals(LockService client) {
      client();
      f.pauseRenewals(client);
    }

    @Override
    public void resumeRenewals(LockService client) {
      f.resumeRenewals(client);
    }

    @Override
    public void endSessions(LockService client) {
      client();
      f.endSessions(client);
    }

    @Override
    public void allowSessions(LockService client) {
      f.allowSessions(client);
    }

    @Override
    public void crashBackend() {
      hold.exclusive();
      f.crashBackend();
    }

    @Override
    public void restartBackend() {
      f.restartBackend();
    }

    @Override
    public void crashMinority(Collection<LockService> spare) {
      hold.exclusive();
      f.crashMinority(spare);
    }

    @Override
    public void restartMinority() {
      f.restartMinority();
    }

    @Override
    public void partitionMinority(Collection<LockService> spare) {
      hold.exclusive();
      f.partitionMinority(spare);
    }

    @Override
    public void healMinority() {
      f.healMinority();
    }
  }
}
