/**
 * The Tumbler compatibility kit: JUnit 5 tests that a provider's test class extends ({@code LockTck}), what it
 * says about its backend ({@code TckTarget}, {@code FaultInjector}), and the standalone runner behind
 * {@code tumbler tck}. JUnit reads the test classes reflectively, so the package is open to it.
 */
module dev.tumbler.lock.tck {
  requires transitive dev.tumbler.lock;
  requires transitive org.junit.jupiter.api;
  requires org.junit.platform.engine;
  requires org.junit.platform.launcher;
  requires org.junit.platform.reporting;
  // a task that does not finish is reported with the threads that hold locks
  requires java.management;

  exports dev.tumbler.lock.tck;
  opens dev.tumbler.lock.tck to org.junit.platform.commons;

  // the registry group checks that the provider under test is found by ServiceLoader
  uses dev.tumbler.lock.spi.LockProvider;
}
