package dev.tumbler.lock;

import java.util.Objects;

/**
 * The provider does not offer a capability the call needs; {@link LockService#supports(Capability)}
 * tells in advance.
 */
public class UnsupportedCapabilityException extends LockException {
  private static final long serialVersionUID = 1L;

  private final Capability capability;

  public UnsupportedCapabilityException(Capability capability, String message) {
    super(message);
    this.capability = Objects.requireNonNull(capability, "capability");
  }

  /** The capability that is missing. */
  public Capability capability() {
    return capability;
  }
}
