package dev.tumbler.lock.spring.autoconfigure;

import java.util.LinkedHashMap;
import java.util.Map;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * The {@code tumbler.*} settings of the auto-configured {@link dev.tumbler.lock.LockService}.
 *
 * <pre>
 * tumbler.url=lock:redis://redis.internal:6379
 * tumbler.properties.leaseTime=10s          # any provider parameter; overrides the URL's query
 * tumbler.properties.password=${REDIS_PASSWORD}
 * tumbler.metrics.lock-name-tag=false
 * </pre>
 */
@ConfigurationProperties(prefix = "tumbler")
public class TumblerProperties {
  /** The default: one embedded node in this JVM (locks shared by the services of this JVM only). */
  public static final String DEFAULT_URL = "lock:native:local";

  /** The lock URL that chooses the provider ({@code lock:<scheme>:...}). */
  private String url = DEFAULT_URL;

  /**
   * Provider parameters, passed as the {@code Properties} of {@code LockProviders.connect(url, properties)}:
   * they override the URL's query parameters, and keep secrets out of the URL. An unknown one fails the start.
   */
  private Map<String, String> properties = new LinkedHashMap<>();

  private final Metrics metrics = new Metrics();
  private final Jdbc jdbc = new Jdbc();
  private final Health health = new Health();

  public String getUrl() {
    return url;
  }

  public void setUrl(String url) {
    this.url = url;
  }

  public Map<String, String> getProperties() {
    return properties;
  }

  public void setProperties(Map<String, String> properties) {
    this.properties = properties;
  }

  public Metrics getMetrics() {
    return metrics;
  }

  public Jdbc getJdbc() {
    return jdbc;
  }

  public Health getHealth() {
    return health;
  }

  /** {@code tumbler.metrics.*}. */
  public static class Metrics {
    /** Whether to meter the service when the application has a MeterRegistry. */
    private boolean enabled = true;

    /**
     * Whether the lock's name is a tag of every meter. Off by default: names built from data (a lock per
     * order) make a time series each.
     */
    private boolean lockNameTag = false;

    public boolean isEnabled() {
      return enabled;
    }

    public void setEnabled(boolean enabled) {
      this.enabled = enabled;
    }

    public boolean isLockNameTag() {
      return lockNameTag;
    }

    public void setLockNameTag(boolean lockNameTag) {
      this.lockNameTag = lockNameTag;
    }
  }

  /** {@code tumbler.jdbc.*}. */
  public static class Jdbc {
    /**
     * Whether a {@code lock:jdbc:<database>} URL that names only the database ({@code lock:jdbc:postgresql})
     * uses the application's DataSource bean (when there is exactly one) instead of a pool of its own.
     */
    private boolean useApplicationDataSource = true;

    public boolean isUseApplicationDataSource() {
      return useApplicationDataSource;
    }

    public void setUseApplicationDataSource(boolean useApplicationDataSource) {
      this.useApplicationDataSource = useApplicationDataSource;
    }
  }

  /** {@code tumbler.health.*}. */
  public static class Health {
    /** The lock that the health check tries once (and releases at once) to see that the backend answers. */
    private String lockName = "tumbler-health";

    public String getLockName() {
      return lockName;
    }

    public void setLockName(String lockName) {
      this.lockName = lockName;
    }
  }
}
