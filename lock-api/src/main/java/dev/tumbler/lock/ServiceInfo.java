package dev.tumbler.lock;

import java.util.Objects;
import java.util.Set;

/**
 * What an open {@link LockService} is: its provider, the provider's version, the URL it was opened
 * with (redacted: no password or secret), and the capabilities this service keeps. The capabilities may
 * be fewer than the provider's maximum, since they can depend on the URL (an algorithm, a mode).
 *
 * @param provider the provider's scheme, as in {@code lock:<scheme>:...}
 * @param providerVersion the provider's version
 * @param url the URL the service was opened with, redacted
 * @param capabilities what this service keeps
 */
public record ServiceInfo(String provider, String providerVersion, String url, Set<Capability> capabilities) {
  public ServiceInfo {
    Objects.requireNonNull(provider, "provider");
    Objects.requireNonNull(providerVersion, "providerVersion");
    Objects.requireNonNull(url, "url");
    capabilities = Set.copyOf(capabilities);
  }
}
