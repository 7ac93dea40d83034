package dev.tumbler.lock.tck.memory;

import dev.tumbler.lock.Capability;
import dev.tumbler.lock.InvalidLockUrlException;
import dev.tumbler.lock.LockService;
import dev.tumbler.lock.ProviderInfo;
import dev.tumbler.lock.spi.LeaseSettings;
import dev.tumbler.lock.spi.LockProvider;
import dev.tumbler.lock.spi.LockUrl;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.Properties;
import java.util.Set;

/**
 * The TCK's reference provider, {@code lock:tck-memory:<server>?leaseTime=1s}: every service opened on
 * the same server name in this JVM is a client of one {@link MemoryServer}. Built only from the SPI
 * helpers, so the TCK passing it also exercises them. {@code defect=...} switches on one deliberate bug
 * (see {@link Defect}) for the TCK's self-test.
 */
public final class MemoryProvider implements LockProvider {
  public static final String SCHEME = "tck-memory";

  static final Set<Capability> CAPABILITIES = EnumSet.of(Capability.MUTEX, Capability.FENCING,
      Capability.LEASE_EXPIRY, Capability.LOST_NOTIFICATION, Capability.READ_WRITE, Capability.SEMAPHORE,
      Capability.LEADER_ELECTION, Capability.FAIR, Capability.TRANSACTIONS, Capability.HIERARCHICAL_NAMES,
      Capability.FAULT_TOLERANT);

  @Override
  public String scheme() {
    return SCHEME;
  }

  @Override
  public ProviderInfo info() {
    return new ProviderInfo(SCHEME, "TCK in-memory reference provider", "test",
        "an in-JVM lock server for the TCK's self-test", CAPABILITIES);
  }

  @Override
  public LockService connect(LockUrl url, Properties info) {
    if (url.isHierarchical()) {
      throw new InvalidLockUrlException("lock URL " + url + ": write lock:tck-memory:<server name>");
    }
    Set<String> accepted = new HashSet<>(LeaseSettings.PARAMETERS);
    accepted.add("defect");
    url.requireKnownParameters(accepted);
    LeaseSettings parsed = LeaseSettings.fromUrl(url);
    Defect defect = url.enumValue("defect", Defect.class, Defect.NONE);
    LeaseSettings settings = defect == Defect.MANUAL_RENEW_IGNORED
        ? new LeaseSettings(parsed.leaseTime(), parsed.safety(), LeaseSettings.Renew.AUTO, parsed.namespace())
        : parsed;
    MemoryServer server = MemoryServer.get(url.opaque(), settings.leaseTime().toNanos(), defect);
    return new MemoryService(url, settings, server);
  }
}
