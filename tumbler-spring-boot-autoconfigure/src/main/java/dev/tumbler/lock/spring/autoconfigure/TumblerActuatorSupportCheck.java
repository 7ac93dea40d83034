package dev.tumbler.lock.spring.autoconfigure;

import java.util.ArrayList;
import java.util.List;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.boot.SpringBootVersion;
import org.springframework.core.env.Environment;
import org.springframework.util.ClassUtils;

/**
 * Says so when the starter's meters or health contributor are missing although the application has what they
 * need: a meter registry and {@code tumbler-micrometer} but a lock service not metered, or a health API of either
 * Spring Boot generation but no {@code tumbler} contributor, without a switch that turned them off. That is what an
 * unsupported Spring Boot version looks like (its auto-configurations elsewhere, ours backing off): one WARN each,
 * naming the Boot version, at startup. Names only, so that it loads on every version.
 */
final class TumblerActuatorSupportCheck implements SmartInitializingSingleton {
  private static final Log LOG = LogFactory.getLog(TumblerActuatorSupportCheck.class);
  private static final String[] HEALTH_APIS = {
      "org.springframework.boot.health.contributor.HealthIndicator", // Boot 4
      "org.springframework.boot.actuate.health.HealthIndicator"}; // Boot 3.5

  private final ListableBeanFactory beans;
  private final Environment env;

  TumblerActuatorSupportCheck(ListableBeanFactory beans, Environment env) {
    this.beans = beans;
    this.env = env;
  }

  @Override
  public void afterSingletonsInstantiated() {
    problems().forEach(LOG::warn);
  }

  /** What is missing, one sentence each; empty when the meters and the health contributor are as expected. */
  List<String> problems() {
    List<String> found = new ArrayList<>();
    if (!beans.containsBean("tumblerLockService")) {
      return found; // the application made its own lock service: what it meters is its own choice
    }
    String boot = SpringBootVersion.getVersion();
    ClassLoader loader = getClass().getClassLoader();
    if (present("io.micrometer.core.instrument.MeterRegistry", loader)
        && present("dev.tumbler.lock.micrometer.MeteredLockService", loader)
        && env.getProperty("tumbler.metrics.enabled", Boolean.class, true)
        && beans.getBeanNamesForType(ClassUtils.resolveClassName("io.micrometer.core.instrument.MeterRegistry", loader))
            .length > 0
        && !beans.containsBean("tumblerMetricsDecorator")) {
      found.add("Tumbler: the application has a MeterRegistry but the lock service is not metered: "
          + "TumblerMetricsAutoConfiguration did not apply on Spring Boot " + boot + " (supported: 3.5 and 4.0); "
          + "tumbler.metrics.enabled=false silences this");
    }
    String api = null;
    for (String h : HEALTH_APIS) {
      if (present(h, loader)) {
        api = h;
        break;
      }
    }
    if (api != null && env.getProperty("management.health.tumbler.enabled", Boolean.class,
        env.getProperty("management.health.defaults.enabled", Boolean.class, true))
        && !beans.containsBean("tumblerHealthIndicator")) {
      found.add("Tumbler: Spring Boot's health API is there (" + api + ") but the 'tumbler' health contributor is not: "
          + "no Tumbler health auto-configuration applied on Spring Boot " + boot + " (supported: 3.5 and 4.0); "
          + "management.health.tumbler.enabled=false silences this");
    }
    return found;
  }

  private static boolean present(String name, ClassLoader loader) {
    return ClassUtils.isPresent(name, loader);
  }
}
