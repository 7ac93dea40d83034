package dev.tumbler.lock.tck;

import dev.tumbler.lock.Capability;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * What a TCK group or test needs from the provider. {@link TckConditions} skips it, with the reason,
 * when the provider does not declare every capability, or its {@link FaultInjector} cannot cause one of
 * the faults ({@link #anyFault()}: at least one of them).
 */
@Retention(RetentionPolicy.RUNTIME)
@Target({ElementType.TYPE, ElementType.METHOD})
@interface Requires {
  Capability[] value() default {};

  FaultInjector.Fault[] faults() default {};

  FaultInjector.Fault[] anyFault() default {};

  /** Needs {@link TckTarget#url()}. */
  boolean url() default false;
}
