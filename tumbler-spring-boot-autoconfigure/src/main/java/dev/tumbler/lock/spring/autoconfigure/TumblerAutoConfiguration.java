package dev.tumbler.lock.spring.autoconfigure;

import dev.tumbler.lock.LockProviders;
import dev.tumbler.lock.LockService;
import dev.tumbler.lock.spi.LockUrl;
import dev.tumbler.lock.spring.LockedBeanPostProcessor;
import java.util.Properties;
import javax.sql.DataSource;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.util.ClassUtils;

/**
 * A {@link LockService} bean connected to {@code tumbler.url} (default {@value TumblerProperties#DEFAULT_URL})
 * with the provider parameters {@code tumbler.properties.*}, wrapped by every {@link LockServiceDecorator}
 * bean, closed when the context closes (which releases every lease taken through it); and the
 * {@link dev.tumbler.lock.spring.Locked @Locked} support. An application's own {@code LockService} bean
 * replaces the first (and is used by {@code @Locked}).
 */
@AutoConfiguration(afterName = {"org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration",
    "org.springframework.boot.autoconfigure.jdbc.DataSourceAutoConfiguration"}) // Boot 4, Boot 3.5
@EnableConfigurationProperties(TumblerProperties.class)
public class TumblerAutoConfiguration {
  /** The connect property under which the JDBC provider takes an application's DataSource. */
  static final String DATA_SOURCE = "dataSource";
  /** The connect property under which the ZooKeeper provider takes an application's started Curator client. */
  static final String CURATOR = "curator";
  private static final String CURATOR_TYPE = "org.apache.curator.framework.CuratorFramework";
  /** The connect property under which the Redis provider takes an application's Jedis client. */
  static final String JEDIS = "jedis";
  private static final String JEDIS_TYPE = "redis.clients.jedis.UnifiedJedis";

  @Bean(destroyMethod = "close")
  @ConditionalOnMissingBean
  public LockService tumblerLockService(TumblerProperties properties, ObjectProvider<DataSource> dataSources,
      ObjectProvider<LockServiceDecorator> decorators, ListableBeanFactory beans) {
    Properties info = new Properties();
    info.putAll(properties.getProperties());
    if (properties.getJdbc().isUseApplicationDataSource() && namesOnlyADatabase(properties.getUrl())) {
      DataSource ds = dataSources.getIfUnique();
      if (ds != null) {
        info.put(DATA_SOURCE, ds);
      }
    }
    if (namesNoHosts(properties.getUrl(), "zookeeper")) {
      Object curator = uniqueBean(beans, CURATOR_TYPE);
      if (curator != null) {
        info.put(CURATOR, curator);
      }
    }
    if (namesNoHosts(properties.getUrl(), "redis")) {
      Object jedis = uniqueBean(beans, JEDIS_TYPE);
      if (jedis != null) {
        info.put(JEDIS, jedis);
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

  /** {@code lock:zookeeper:///chroot}, {@code lock:redis:///}: the form for "use the client you are given". */
  static boolean namesNoHosts(String url, String scheme) {
    if (url == null || !url.startsWith("lock:" + scheme + ":")) {
      return false;
    }
    LockUrl parsed = LockUrl.parse(url);
    return parsed.isHierarchical() && parsed.hosts().isEmpty();
  }

  /** The one bean of the named type, or null when the type is not on the class path or there is none or several. */
  private static Object uniqueBean(ListableBeanFactory beans, String type) {
    ClassLoader loader = TumblerAutoConfiguration.class.getClassLoader();
    if (!ClassUtils.isPresent(type, loader)) {
      return null;
    }
    String[] names = beans.getBeanNamesForType(ClassUtils.resolveClassName(type, loader));
    return names.length == 1 ? beans.getBean(names[0]) : null;
  }

  @Bean
  @ConditionalOnMissingBean
  public static LockedBeanPostProcessor tumblerLockedBeanPostProcessor(ObjectProvider<LockService> locks) {
    return new LockedBeanPostProcessor(locks::getObject);
  }

  /** A WARN at startup when the meters or the health contributor are missing although the application has their needs. */
  @Bean
  static SmartInitializingSingleton tumblerActuatorSupportCheck(ListableBeanFactory beans,
      org.springframework.core.env.Environment env) {
    return new TumblerActuatorSupportCheck(beans, env);
  }
}
