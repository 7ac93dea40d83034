package dev.tumbler.lock.spi;

import dev.tumbler.lock.LockService;

/** Lets tests in other packages see what the test provider was given. */
public final class TestProviderAccess {
  private TestProviderAccess() {}

  public static LockUrl lastUrl() {
    return TestBackend.Provider.lastUrl;
  }

  public static LockService newService() {
    return new TestBackend().open(LeaseSettings.defaults(), Ticker.system());
  }
}
