package dev.tumbler.lock.tck;

import java.util.Optional;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.TestExecutionExceptionHandler;
import org.opentest4j.TestAbortedException;

/**
 * Names the provider's TCK class in every failure of a TCK test, as a suppressed exception of the failure
 * ({@code Suppressed: … tck target: com.example.MyTckTest}): the groups are nested classes of {@link LockTck},
 * so their reports and log lines name the group ({@code LockTck$Contention}) and not the target, and a build
 * that runs several targets at once (the native provider's has eleven) interleaves their lines. The failure
 * itself is thrown on unchanged; a skipped test is left alone.
 */
final class TckTargetNames implements TestExecutionExceptionHandler {

  /** What the stack trace shows before the target's class name. */
  static final String MARK = "tck target: ";

  @Override
  public void handleTestExecutionException(ExtensionContext context, Throwable failure) throws Throwable {
    if (!(failure instanceof TestAbortedException)) {
      Optional<LockTck> tck = context.getTestInstances().flatMap(i -> i.findInstance(LockTck.class));
      tck.ifPresent(t -> failure.addSuppressed(new Target(t.getClass().getName())));
    }
    throw failure;
  }

  /** The marker: its message is all it carries. */
  static final class Target extends Exception {
    private static final long serialVersionUID = 1L;

    Target(String className) {
      super(MARK + className, null, false, false);
    }
  }
}
