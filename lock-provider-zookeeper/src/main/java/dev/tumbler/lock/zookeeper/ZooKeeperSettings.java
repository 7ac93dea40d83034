package dev.tumbler.lock.zookeeper;

import dev.tumbler.lock.InvalidLockUrlException;
import dev.tumbler.lock.spi.LeaseSettings;
import dev.tumbler.lock.spi.LockUrl;
import java.time.Duration;
import java.util.HashSet;
import java.util.Set;
import java.util.stream.Collectors;
import org.apache.curator.utils.PathUtils;

/**
 * What a {@code lock:zookeeper://h1:2181,h2:2181/chroot?...} URL says, validated when it is given.
 *
 * <p>The session is the lease: ZooKeeper deletes a holder's lock node when its session expires, so the
 * lease term is the session timeout. {@code leaseTime} and {@code sessionTimeout} are two names for it;
 * giving both with different values is an error (a typo must not pick one silently).
 *
 * @param connectString the ensemble's hosts, each with a port (2181 when the URL gave none), joined for
 *     ZooKeeper
 * @param root the znode under which every lock of this service lives (the chroot, default
 *     {@code /tumbler}, plus the escaped {@code namespace})
 * @param connectionTimeout how long {@code connect} waits for the first connection, and each operation
 *     for a connection
 * @param lease the lease settings; their term is the session timeout asked of the ensemble, until the
 *     negotiated one is known
 */
record ZooKeeperSettings(String connectString, String root, Duration connectionTimeout, LeaseSettings lease) {

  static final int DEFAULT_PORT = 2181;
  static final String DEFAULT_CHROOT = "/tumbler";
  static final Duration DEFAULT_CONNECTION_TIMEOUT = Duration.ofSeconds(15);
  static final Set<String> PARAMETERS;

  static {
    Set<String> p = new HashSet<>(LeaseSettings.PARAMETERS);
    p.add("sessionTimeout");
    p.add("connectionTimeout");
    PARAMETERS = Set.copyOf(p);
  }

  /**
   * Reads and checks a URL.
   *
   * @throws InvalidLockUrlException naming what is wrong
   */
  static ZooKeeperSettings fromUrl(LockUrl url) {
    return fromUrl(url, null);
  }

  /**
   * Reads and checks a URL for a service on the application's own Curator client, which is connected to its
   * ensemble already: the URL names no hosts ({@code lock:zookeeper:///chroot?namespace=...}, or
   * {@code lock:zookeeper:}), and the session is the client's, so {@code sessionTimeout} and {@code leaseTime} are
   * refused (the lease term is the session timeout the client negotiated).
   *
   * @param client a description of the client, for messages; null when the service builds its own
   * @throws InvalidLockUrlException naming what is wrong
   */
  static ZooKeeperSettings fromUrl(LockUrl url, String client) {
    if (client != null) {
      if (url.isHierarchical() ? !url.hosts().isEmpty() : !url.opaque().isEmpty()) {
        throw new InvalidLockUrlException("lock URL " + url + ": with the application's Curator client the URL "
            + "names no hosts (the client has them): lock:zookeeper:///chroot[?namespace=...]");
      }
      for (String p : new String[] {"sessionTimeout", "leaseTime"}) {
        if (url.parameter(p).isPresent()) {
          throw new InvalidLockUrlException("lock URL " + url + ": parameter '" + p + "' does not apply with the "
              + "application's Curator client: the lease is its session, whose timeout is set where the client is "
              + "built");
        }
      }
    } else if (!url.isHierarchical() || url.hosts().isEmpty()) {
      throw new InvalidLockUrlException("lock URL " + url + ": the zookeeper provider needs hosts: "
          + "lock:zookeeper://host[:port][,host[:port]...][/chroot][?sessionTimeout=15s&...]");
    }
    if (url.user().isPresent() || url.password().isPresent()) {
      throw new InvalidLockUrlException("lock URL " + url + ": the zookeeper provider does not take user "
          + "info; remove 'user@' from the URL");
    }
    url.requireKnownParameters(PARAMETERS);
    LeaseSettings lease = LeaseSettings.fromUrl(url);
    Duration session = url.duration("sessionTimeout", null);
    boolean leaseGiven = url.parameter("leaseTime").isPresent();
    if (session != null && leaseGiven && !session.equals(lease.leaseTime())) {
      throw new InvalidLockUrlException("lock URL " + url + ": 'leaseTime' (" + lease.leaseTime().toMillis()
          + "ms) and 'sessionTimeout' (" + session.toMillis() + "ms) differ; on ZooKeeper the lease is the "
          + "session, give one of them");
    }
    if (session == null) {
      session = lease.leaseTime();
    } else if (session.compareTo(LeaseSettings.MIN_LEASE_TIME) < 0) {
      throw new InvalidLockUrlException("lock URL " + url + ": parameter 'sessionTimeout': "
          + session.toMillis() + "ms is shorter than the minimum " + LeaseSettings.MIN_LEASE_TIME.toMillis() + "ms");
    }
    if (session.toMillis() > Integer.MAX_VALUE) {
      throw new InvalidLockUrlException("lock URL " + url + ": parameter 'sessionTimeout' is too long: " + session);
    }
    Duration connection = url.duration("connectionTimeout", DEFAULT_CONNECTION_TIMEOUT);
    if (connection.isZero() || connection.toMillis() > Integer.MAX_VALUE) {
      throw new InvalidLockUrlException("lock URL " + url + ": parameter 'connectionTimeout' must be within "
          + "1ms and 24 days: " + connection);
    }
    String chroot = !url.isHierarchical() || url.path().isEmpty() ? DEFAULT_CHROOT : url.path();
    if (chroot.length() > 1 && chroot.endsWith("/")) {
      chroot = chroot.substring(0, chroot.length() - 1);
    }
    try {
      PathUtils.validatePath(chroot);
    } catch (IllegalArgumentException e) {
      throw new InvalidLockUrlException("lock URL " + url + ": the chroot path '" + chroot
          + "' is not a valid znode path: " + e.getMessage());
    }
    if (chroot.equals("/zookeeper") || chroot.startsWith("/zookeeper/")) {
      throw new InvalidLockUrlException("lock URL " + url + ": the chroot path '" + chroot
          + "' is inside ZooKeeper's reserved /zookeeper tree");
    }
    String root = lease.namespace().isEmpty() ? chroot
        : (chroot.equals("/") ? "" : chroot) + "/" + ZNodeNames.segment(lease.namespace());
    String connect = client != null ? client : url.hosts(DEFAULT_PORT).stream().map(LockUrl.HostAndPort::toString)
        .collect(Collectors.joining(","));
    return new ZooKeeperSettings(connect, root, connection, lease.withLeaseTime(session));
  }

  /** The session timeout asked of the ensemble (it may negotiate another): the lease term. */
  Duration sessionTimeout() {
    return lease.leaseTime();
  }

  /**
   * The path of the lock directory of one kind ({@code locks}, {@code rwlocks}, {@code semaphores},
   * {@code elections}).
   */
  String path(String kind, String name) {
    return (root.equals("/") ? "" : root) + "/" + kind + "/" + ZNodeNames.segment(name);
  }
}
