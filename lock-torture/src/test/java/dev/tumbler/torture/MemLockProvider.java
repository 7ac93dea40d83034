package dev.tumbler.torture;

import dev.tumbler.lock.Capability;
import dev.tumbler.lock.InvalidLockUrlException;
import dev.tumbler.lock.Lease;
import dev.tumbler.lock.Lock;
import dev.tumbler.lock.LockService;
import dev.tumbler.lock.ProviderInfo;
import dev.tumbler.lock.ServiceInfo;
import dev.tumbler.lock.ServiceUnavailableException;
import dev.tumbler.lock.spi.AbstractLease;
import dev.tumbler.lock.spi.AbstractLock;
import dev.tumbler.lock.spi.AbstractLockService;
import dev.tumbler.lock.spi.Deadline;
import dev.tumbler.lock.spi.LeaseSettings;
import dev.tumbler.lock.spi.LockProvider;
import dev.tumbler.lock.spi.LockUrl;
import dev.tumbler.lock.spi.Ticker;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The client of a {@link MemLockServer}: {@code lock:torture-mem://host:port?leaseTime=1s&defects=n1:grant-twice,…}.
 * Built from the SPI's helpers (renewal, expiry, listeners come from {@link AbstractLease}); each request carries
 * the defect the URL gives its name, which the server acts on, except {@code wait-long}, which lives here: one acquire in
 * three of such a name first sleeps its whole wait and 4 s more, then tries once, so that it returns past its bound.
 */
public final class MemLockProvider implements LockProvider {
  static final String SCHEME = "torture-mem";
  static final Set<Capability> CAPABILITIES = EnumSet.of(Capability.MUTEX, Capability.FENCING,
      Capability.LEASE_EXPIRY, Capability.LOST_NOTIFICATION);

  @Override
  public String scheme() {
    return SCHEME;
  }

  @Override
  public ProviderInfo info() {
    return new ProviderInfo(SCHEME, "torture known-answer provider", "test",
        "a lock server in the test's JVM with defects on purpose", CAPABILITIES);
  }

  @Override
  public LockService connect(LockUrl url, Properties info) {
    Set<String> accepted = new HashSet<>(LeaseSettings.PARAMETERS);
    accepted.add("defects");
    url.requireKnownParameters(accepted);
    if (!url.isHierarchical() || url.hosts().size() != 1) {
      throw new InvalidLockUrlException("lock URL " + url + ": write lock:torture-mem://host:port");
    }
    Map<String, String> defects = new HashMap<>();
    for (String d : url.string("defects", "").split(",")) {
      int colon = d.indexOf(':');
      if (colon > 0) {
        defects.put(d.substring(0, colon), d.substring(colon + 1));
      }
    }
    LockUrl.HostAndPort h = url.hosts().getFirst();
    return new Service(url, LeaseSettings.fromUrl(url), h.host(), h.port(), defects);
  }

  static final class Service extends AbstractLockService {
    private final String host;
    private final int port;
    private final Map<String, String> defects;
    private final String id = UUID.randomUUID().toString().substring(0, 8);
    private final AtomicLong grants = new AtomicLong();
    private Socket socket;
    private BufferedReader in;
    private Writer out;

    Service(LockUrl url, LeaseSettings settings, String host, int port, Map<String, String> defects) {
      super(new ServiceInfo(SCHEME, "test", url.toString(), CAPABILITIES), settings, Ticker.system());
      this.host = host;
      this.port = port;
      this.defects = defects;
    }

    String defect(String name) {
      return defects.getOrDefault(name, "none");
    }

    /** One request, one answer; a connection that fails or is silent for 500 ms is dropped. */
    synchronized String call(String request) {
      try {
        if (socket == null) {
          Socket s = new Socket();
          s.connect(new InetSocketAddress(host, port), 500);
          s.setSoTimeout(500);
          socket = s;
          in = new BufferedReader(new InputStreamReader(s.getInputStream(), StandardCharsets.UTF_8));
          out = new OutputStreamWriter(s.getOutputStream(), StandardCharsets.UTF_8);
        }
        out.write(request);
        out.write('\n');
        out.flush();
        String line = in.readLine();
        if (line == null) {
          throw new IOException("the server closed the connection");
        }
        return line;
      } catch (IOException e) {
        if (socket != null) {
          try {
            socket.close();
          } catch (IOException ignored) {
            // dropping it
          }
          socket = null;
        }
        throw new ServiceUnavailableException("torture-mem server " + host + ":" + port + ": " + e.getMessage(), e);
      }
    }

    @Override
    protected Lock createLock(String name) {
      MemLock lock = new MemLock(this, name);
      return defect(name).equals("wait-long") ? new LateLock(lock) : lock;
    }

    @Override
    protected void doClose() {
      synchronized (this) {
        if (socket != null) {
          try {
            socket.close();
          } catch (IOException ignored) {
            // closing anyway
          }
        }
      }
    }

    long ttl() {
      return settings().leaseTime().toMillis();
    }

    String nextOwner() {
      return id + "-" + grants.incrementAndGet();
    }
  }

  static final class MemLock extends AbstractLock {
    private final Service service;

    MemLock(Service service, String name) {
      super(service, name);
      this.service = service;
    }

    @Override
    protected AbstractLease doAcquire(Deadline deadline) throws InterruptedException {
      String owner = service.nextOwner();
      String defect = service.defect(name());
      while (true) {
        long sent = service.ticker().read();
        try {
          String answer = service.call("ACQ " + name() + " " + owner + " " + service.ttl() + " " + defect);
          if (answer.startsWith("OK ")) {
            return new MemLease(service, name(), owner, Long.parseLong(answer.substring(3)), sent);
          }
        } catch (ServiceUnavailableException e) {
          if (deadline.isExpired()) {
            throw e;
          }
        }
        if (deadline.isExpired()) {
          return null;
        }
        Thread.sleep(Math.max(1, Math.min(20, deadline.remainingNanos() / 1_000_000)));
      }
    }
  }

  static final class MemLease extends AbstractLease {
    private final Service service;
    private final String owner;

    MemLease(Service service, String name, String owner, long token, long sent) {
      super(name, token, 1, service.settings(), service.ticker(), sent);
      this.service = service;
      this.owner = owner;
    }

    @Override
    protected boolean doRenew() {
      return service.call("RENEW " + name() + " " + owner + " " + fencingToken() + " " + service.ttl() + " "
          + service.defect(name())).equals("OK");
    }

    @Override
    protected void doRelease() {
      service.call("REL " + name() + " " + owner + " " + fencingToken() + " " + service.defect(name()));
    }
  }

  /** {@code wait-long}: one acquire in three sleeps its whole wait and 4 s more, then tries once. */
  record LateLock(MemLock lock) implements Lock {
    private static final java.util.concurrent.atomic.AtomicLong CALLS = new java.util.concurrent.atomic.AtomicLong();

    @Override
    public String name() {
      return lock.name();
    }

    @Override
    public Lease acquire() throws InterruptedException {
      return lock.acquire();
    }

    @Override
    public Optional<Lease> tryAcquire(Duration maxWait) throws InterruptedException {
      if (CALLS.incrementAndGet() % 3 != 0) {
        return lock.tryAcquire(maxWait);
      }
      Thread.sleep(maxWait.plusMillis(4000));
      return lock.tryAcquire(Duration.ZERO);
    }

    @Override
    public CompletableFuture<Lease> acquireAsync(Duration maxWait) {
      return lock.acquireAsync(maxWait);
    }

    @Override
    public java.util.concurrent.locks.Lock asJavaLock() {
      return lock.asJavaLock();
    }
  }
}
