package dev.tumbler.lock.tck;

import dev.tumbler.lock.Capability;
import java.lang.reflect.AnnotatedElement;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.extension.ConditionEvaluationResult;
import org.junit.jupiter.api.extension.ExecutionCondition;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Skips the TCK groups and tests a provider has not declared, or has excluded with a reason, so that
 * they are reported as skipped with that reason rather than passed or failed.
 */
final class TckConditions implements ExecutionCondition {

  @Override
  public ConditionEvaluationResult evaluateExecutionCondition(ExtensionContext context) {
    Optional<AnnotatedElement> element = context.getElement();
    if (element.isEmpty()) {
      return ConditionEvaluationResult.enabled("no element");
    }
    Optional<LockTck> tck = findTck(context);
    if (tck.isEmpty()) {
      return ConditionEvaluationResult.enabled("outside a TCK run");
    }
    LockTck t = tck.get();
    String key = exclusionKey(context);
    String selected = System.getProperty("tck.groups", "").trim();
    if (!selected.isEmpty() && key != null && !key.contains(".") && LockTck.GROUPS.stream()
        .anyMatch(g -> g.getSimpleName().equals(key))) {
      boolean chosen = Arrays.stream(selected.split(",")).map(String::trim).anyMatch(key::equalsIgnoreCase);
      if (!chosen) {
        return ConditionEvaluationResult.disabled("not among the groups -Dtck.groups=" + selected + " selects");
      }
    }
    if (key != null) {
      String reason = t.excludedTests().get(key);
      if (reason != null) {
        return ConditionEvaluationResult.disabled("excluded by the provider: " + reason);
      }
    }
    Requires r = element.get().getAnnotation(Requires.class);
    if (r == null) {
      return ConditionEvaluationResult.enabled("no requirement");
    }
    Set<Capability> caps = t.capabilities();
    List<String> missing = new ArrayList<>();
    for (Capability c : r.value()) {
      if (!caps.contains(c)) {
        missing.add(c.name());
      }
    }
    if (!missing.isEmpty()) {
      return ConditionEvaluationResult.disabled("provider does not declare " + String.join(", ", missing));
    }
    if (r.url() && t.target().url().isEmpty()) {
      return ConditionEvaluationResult.disabled("the target gives no URL (services opened by a factory)");
    }
    Set<FaultInjector.Fault> faults = t.faultsSupported();
    if ((r.faults().length > 0 || r.anyFault().length > 0) && t.target().faults().isEmpty()) {
      return ConditionEvaluationResult.disabled("no FaultInjector: the target cannot inject faults");
    }
    List<String> noFault = new ArrayList<>();
    for (FaultInjector.Fault f : r.faults()) {
      if (!faults.contains(f)) {
        noFault.add(f.name());
      }
    }
    if (!noFault.isEmpty()) {
      return ConditionEvaluationResult.disabled("provider's fault injector cannot " + String.join(", ", noFault));
    }
    if (r.anyFault().length > 0 && Arrays.stream(r.anyFault()).noneMatch(faults::contains)) {
      return ConditionEvaluationResult.disabled("provider's fault injector can do none of "
          + Arrays.toString(r.anyFault()));
    }
    return ConditionEvaluationResult.enabled("requirements met");
  }

  /** "Group" for a group, "Group.method" for a test. */
  private static String exclusionKey(ExtensionContext context) {
    if (context.getTestMethod().isPresent()) {
      return context.getRequiredTestClass().getSimpleName() + "." + context.getRequiredTestMethod().getName();
    }
    Optional<Class<?>> c = context.getTestClass();
    return c.map(Class::getSimpleName).orElse(null);
  }

  private static Optional<LockTck> findTck(ExtensionContext context) {
    for (ExtensionContext c = context; c != null; c = c.getParent().orElse(null)) {
      Optional<LockTck> found = c.getTestInstances().flatMap(i -> i.findInstance(LockTck.class));
      if (found.isPresent()) {
        return found;
      }
      Optional<Object> instance = c.getTestInstance();
      if (instance.isPresent() && instance.get() instanceof LockTck t) {
        return Optional.of(t);
      }
    }
    return Optional.empty();
  }
}
