package dev.tumbler.lock.spring.autoconfigure;

import dev.tumbler.lock.LockProviders;
import dev.tumbler.lock.LockService;
import dev.tumbler.lock.spi.LockUrl;
import dev.tumbler.lock.spring.LockedBeanPostProcessor;
import java.util.Properties;
import javax.sql.DataSource;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;

/**
 * A {@link LockService} bean connected to {@code tumbler.url} (default {@value TumblerProperties#DEFAULT_URL})
 * with the provider parameters {@code tumbler.properties.*}, wrapped by every {@link LockServiceDecorator}
 * bean, closed when the context closes (which releases every lease taken through it); and the
 * {@link dev.tumbler.lock.spring.Locked @Locked} support. An application's own {@code LockService} bean
 * replaces the first (and is used by {@code @Locked}).
 */
@AutoConfiguration(afterName = "org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration")
@EnableConfigurationProperties(TumblerProperties.class)
public class TumblerAutoConfiguration {
  /** The connect property under which the JDBC provider takes an application's DataSource. */
  static final String DATA_SOURCE = "dataSource";

  @Bean(destroyMethod = "close")
  @ConditionalOnMissingBean
  public LockService tumblerLockService(TumblerProperties properties, ObjectProvider<DataSource> dataSources,
      ObjectProvider<LockServiceDecorator> decorators) {
    Properties info = new Properties();
    info.putAll(properties.getProperties());
    if (properties.getJdbc().isUseApplicationDataSource() && namesOnlyADatabase(properties.getUrl())) {
      DataSource ds = dataSources.getIfUnique();
      if (ds != null) {
        info.put(DATA_SOURCE, ds);
      }
    }
    LockService service = LockProviders.connect(properties.getUrl(), info);
    try {
      for (LockServiceDecorator d : decorators.orderedStream().toList()) {
        service = d.decorate(service);
      }
      return service;
    } catch (RuntimeException | Error e) {
      service.close();
      throw e;
    }
  }

  /** {@code lock:jdbc:postgresql}: the JDBC provider's form for "use the DataSource you are given". */
  static boolean namesOnlyADatabase(String url) {
    if (url == null || !url.startsWith("lock:jdbc:")) {
      return false;
    }
    LockUrl parsed = LockUrl.parse(url);
    String rest = parsed.isHierarchical() ? null : parsed.opaque();
    return rest != null && rest.matches("[A-Za-z][A-Za-z0-9+.-]*");
  }

  @Bean
  @ConditionalOnMissingBean
  public static LockedBeanPostProcessor tumblerLockedBeanPostProcessor(ObjectProvider<LockService> locks) {
    return new LockedBeanPostProcessor(locks::getObject);
  }
}
