package dev.tumbler.lock;

import java.util.Objects;
import java.util.Set;

/**
 * An installed provider, as {@link LockProviders#providers()} lists it.
 *
 * @param scheme the URL scheme it handles: {@code redis} handles {@code lock:redis:...}
 * @param name a human-readable name
 * @param version the provider's version
 * @param description one line on what it is
 * @param capabilities the most a service of this provider can keep (a given URL may keep fewer; see
 *     {@link ServiceInfo#capabilities()})
 */
public record ProviderInfo(String scheme, String name, String version, String description,
    Set<Capability> capabilities) {
  public ProviderInfo {
    Objects.requireNonNull(scheme, "scheme");
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(version, "version");
    Objects.requireNonNull(description, "description");
    capabilities = Set.copyOf(capabilities);
  }

  @Override
  public String toString() {
    return scheme + " (" + name + " " + version + ")";
  }
}
