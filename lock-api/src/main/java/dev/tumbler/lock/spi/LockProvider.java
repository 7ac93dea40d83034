package dev.tumbler.lock.spi;

import dev.tumbler.lock.LockService;
import dev.tumbler.lock.ProviderInfo;
import java.util.Properties;

/**
 * A lock backend, found by {@link java.util.ServiceLoader} (list the class in
 * {@code META-INF/services/dev.tumbler.lock.spi.LockProvider}, or {@code provides} it from a module) or
 * registered with {@link dev.tumbler.lock.LockProviders#register}. Needs a public no-argument
 * constructor and must be thread safe.
 */
public interface LockProvider {

  /** The URL scheme it handles: {@code "redis"} handles {@code lock:redis:...}. Lower case. */
  String scheme();

  /** What it is and the most it can keep. */
  ProviderInfo info();

  /**
   * Opens a service. {@code url.scheme()} equals {@link #scheme()}. {@code info} holds overrides of URL
   * parameters; {@link LockUrl#withOverrides} has already been applied to {@code url}, and
   * {@code info} is passed for anything that is not a URL parameter (objects the caller put in it).
   *
   * @throws dev.tumbler.lock.InvalidLockUrlException if a parameter is unknown or invalid
   * @throws dev.tumbler.lock.ServiceUnavailableException if the backend cannot be reached
   */
  LockService connect(LockUrl url, Properties info);
}
