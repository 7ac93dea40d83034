package dev.tumbler.lock.spring.autoconfigure;

import dev.tumbler.lock.LockService;

/**
 * Wraps the auto-configured {@link LockService} before it becomes a bean; the Micrometer decorator is one.
 * Beans of this type are applied in their {@link org.springframework.core.annotation.Order}; the bean is the
 * result, and closing it must close the service it wraps.
 */
@FunctionalInterface
public interface LockServiceDecorator {
  LockService decorate(LockService service);
}
