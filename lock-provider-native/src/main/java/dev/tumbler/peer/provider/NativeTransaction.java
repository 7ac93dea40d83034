package dev.tumbler.peer.provider;

import dev.tumbler.lock.DeadlockException;
import dev.tumbler.lock.LeaseLostEvent;
import dev.tumbler.lock.LeaseLostException;
import dev.tumbler.lock.LockMode;
import dev.tumbler.lock.LockTransaction;
import dev.tumbler.lock.ServiceUnavailableException;
import dev.tumbler.lock.TransactionOptions;
import dev.tumbler.lock.spi.Checks;
import dev.tumbler.lock.spi.Deadline;
import dev.tumbler.lock.spi.LeaseSettings;
import dev.tumbler.peer.core.Claim;
import dev.tumbler.peer.core.Output;
import dev.tumbler.peer.core.TxOptions;
import dev.tumbler.peer.runtime.PeerNode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;

/**
 * A lock transaction on a native node whose algorithm serves them ({@code agent}): one agent in the core, which
 * claims each path on the transaction's nodes and resolves deadlocks with the other agents (NATIVE-ALGORITHMS §4).
 *
 * <ul>
 *   <li>{@link #lock} records the claim and asks the node at once; it never waits. Asking {@code WRITE} for a path
 *       held in {@code READ} asks for the upgrade, granted once this transaction is the path's only reader.
 *   <li>{@link #await} waits until every claim is held. It throws {@link DeadlockException} when the transaction
 *       was aborted to break a deadlock ({@code abortOnDeadlock}), {@link ServiceUnavailableException} when the
 *       nodes of its claims stayed unreachable for {@code peerTimeout}, and {@link LeaseLostException} when a held
 *       claim's lease ran out: the transaction can then never hold all its claims again and should be closed.
 *   <li>A claim surrendered to break a deadlock is told to {@link #onLost} listeners ({@code DEADLOCK}) and asked
 *       for again at once: {@code await} goes on waiting, and the claim comes back with a larger token.
 *   <li>Each held claim is a lease of the transaction's term, renewed in the background every third of it (whatever
 *       the service's {@code renew} mode: a transaction has no renew call) until the transaction closes.
 * </ul>
 * Thread safe, though the API asks for one thread at a time.
 */
final class NativeTransaction implements LockTransaction, PeerNode.TransactionListener {

  private final NativeLockService service;
  private final PeerNode<?> node;
  private final long txId;
  private final LeaseSettings leaseSettings;
  private final List<Consumer<LeaseLostEvent>> listeners = new CopyOnWriteArrayList<>();
  /** Each path asked for, in the order asked (under this). */
  private final Map<List<String>, Claimed> claims = new LinkedHashMap<>();
  /** Which path each request asked for (under this). */
  private final Map<Long, Claimed> byRequest = new HashMap<>();
  private boolean closed;
  /** Why the transaction is over though not closed: an exception {@link #await} throws; null while it is not. */
  private RuntimeException ended;

  /** A path asked for: the strongest mode asked, the latest request for it, and its lease while it is held. */
  private static final class Claimed {
    final List<String> path;
    LockMode mode;
    long requestId;
    NativeLease lease;
    /** The lease of the read claim an upgrade came from, until the write claim is held. */
    NativeLease upgradedFrom;

    Claimed(List<String> path, LockMode mode) {
      this.path = path;
      this.mode = mode;
    }

    boolean held() {
      return lease != null && lease.isValid();
    }
  }

  NativeTransaction(NativeLockService service, TransactionOptions options) {
    this.service = service;
    this.node = service.node();
    LeaseSettings s = service.settings();
    if (options.leaseTime() != null && options.leaseTime().compareTo(s.leaseTime()) > 0) {
      // a lock server that restarts waits out the service's term for the nodes that do not come back to restate
      // their agents' locks: a longer lease could still be trusted by then
      throw new IllegalArgumentException("leaseTime " + options.leaseTime() + " is longer than the service's leaseTime "
          + s.leaseTime() + "; a transaction's locks may have a shorter term, not a longer one: open the service with "
          + "a longer leaseTime");
    }
    Duration term = options.leaseTime() != null ? options.leaseTime() : s.leaseTime();
    this.leaseSettings = new LeaseSettings(term, s.safety(), LeaseSettings.Renew.AUTO, s.namespace());
    // a thin client knows its members by their client addresses only: its member checks the node ids
    List<String> members = service.members();
    for (String n : service.nativeSettings().thinClient() ? List.<String>of() : options.nodes()) {
      if (!members.contains(n)) {
        throw new IllegalArgumentException("nodes: '" + n + "' is not a member of the cluster; members: " + members);
      }
    }
    TxOptions tx = new TxOptions(options.abortOnDeadlock(), options.quorum(), options.nodes(),
        options.leaseTime() == null ? 0 : options.leaseTime().toNanos());
    this.txId = node.begin(service.session(), tx, this);
  }

  @Override
  public LockTransaction lock(LockMode mode, String... path) {
    Objects.requireNonNull(path, "path");
    return lock(mode, List.of(path));
  }

  @Override
  public LockTransaction lock(LockMode mode, List<String> path) {
    Objects.requireNonNull(mode, "mode");
    List<String> p = List.copyOf(Checks.path(path));
    service.checkOpen();
    long id;
    Claimed c;
    synchronized (this) {
      if (closed || ended != null) {
        throw new IllegalStateException("transaction " + txId + " on " + service.info().url() + " is "
            + (closed ? "closed" : "over: " + ended.getMessage()));
      }
      c = claims.get(p);
      if (c != null && (c.mode == LockMode.WRITE || c.mode == mode)) {
        return this; // asked already, in this mode or a stronger one
      }
      if (c == null) {
        c = new Claimed(p, mode);
        claims.put(p, c);
      } else {
        c.mode = LockMode.WRITE; // an upgrade: the read claim stays held until the write claim is
        c.upgradedFrom = c.lease;
        c.lease = null;
      }
      // filed before it is asked for: a claim on this node alone is granted within the call, on this thread
      id = node.newRequestId();
      c.requestId = id;
      byRequest.put(id, c);
      node.acquire(id, txId, Claim.tx(qualify(p), mode == LockMode.READ ? Claim.Mode.READ : Claim.Mode.WRITE));
    }
    return this;
  }

  /** The path as the core sees it: its first name qualified with the service's namespace. */
  private List<String> qualify(List<String> path) {
    List<String> q = new ArrayList<>(path);
    q.set(0, service.nativeSettings().qualify(path.get(0)));
    return q;
  }

  @Override
  public boolean await(Duration maxWait) throws InterruptedException {
    Deadline deadline = Deadline.after(Checks.maxWait(maxWait), service.ticker());
    synchronized (this) {
      while (true) {
        if (closed) {
          throw new IllegalStateException("transaction " + txId + " on " + service.info().url() + " is closed");
        }
        if (ended != null) {
          throw ended;
        }
        if (claims.values().stream().allMatch(Claimed::held)) {
          return true;
        }
        long left = deadline.remainingNanos();
        if (left <= 0) {
          return false;
        }
        // woken by every grant, failure and abort; the bound only re-checks leases that ran out meanwhile
        long wait = Math.min(left, 100_000_000L);
        wait(wait / 1_000_000, (int) (wait % 1_000_000));
      }
    }
  }

  @Override
  public synchronized Map<List<String>, Long> fencingTokens() {
    Map<List<String>, Long> tokens = new LinkedHashMap<>();
    for (Claimed c : claims.values()) {
      if (c.held()) {
        tokens.put(c.path, c.lease.fencingToken());
      } else if (c.upgradedFrom != null && c.upgradedFrom.isValid()) {
        tokens.put(c.path, c.upgradedFrom.fencingToken()); // read, while the upgrade waits
      }
    }
    return Map.copyOf(tokens);
  }

  @Override
  public LockTransaction onLost(Consumer<LeaseLostEvent> listener) {
    listeners.add(Objects.requireNonNull(listener, "listener"));
    return this;
  }

  @Override
  public void close() {
    List<NativeLease> leases = new ArrayList<>();
    synchronized (this) {
      if (closed) {
        return;
      }
      closed = true;
      for (Claimed c : claims.values()) {
        if (c.lease != null) {
          leases.add(c.lease);
        }
        if (c.upgradedFrom != null) {
          leases.add(c.upgradedFrom);
        }
      }
      notifyAll();
    }
    node.end(txId);
    for (NativeLease l : leases) {
      l.release(); // stops its renewals; the node ignores the release of a transaction's claim (End gave it back)
    }
  }

  // ---- what the node tells

  @Override
  public void granted(PeerNode.Outcome o) {
    NativeLease lease;
    NativeLease readLease = null;
    synchronized (this) {
      Claimed c = byRequest.get(o.requestId());
      if (closed || ended != null || c == null || c.requestId != o.requestId()) {
        return; // the transaction ended meanwhile (End gives the claim back), or a read claim an upgrade replaced
      }
      String name = String.join("/", c.path);
      lease = new NativeLease(name, o.fencingToken(), 1, service, o.requestId(), o.sentAt(), leaseSettings);
      c.lease = lease;
      readLease = c.upgradedFrom;
      c.upgradedFrom = null;
      lease.onLost(this::lost);
      notifyAll();
    }
    lease.bindLoss();
    service.renewer().watch(lease);
    if (readLease != null) {
      readLease.release(); // the write claim holds the path now; the read claim ends with the transaction
    }
  }

  @Override
  public void failed(PeerNode.Outcome o) {
    synchronized (this) {
      Claimed c = byRequest.get(o.requestId());
      if (closed || ended != null || c == null || c.requestId != o.requestId()) {
        return;
      }
      ended = failure(o.failure(), o.missingPeers(), "claim on " + c.path + " failed"
          + (o.detail().isEmpty() ? "" : ": " + o.detail()));
      notifyAll();
    }
  }

  @Override
  public void aborted(Output.Failure failure, Set<String> missingPeers, String detail) {
    synchronized (this) {
      if (closed || ended != null) {
        return;
      }
      ended = failure(failure, missingPeers, detail);
      notifyAll();
    }
  }

  private RuntimeException failure(Output.Failure failure, Set<String> missing, String detail) {
    String where = "transaction " + txId + " on " + service.info().url();
    return switch (failure) {
      case DEADLOCK -> new DeadlockException(where + " was aborted: " + detail + "; every lock it held was released");
      case UNAVAILABLE -> new ServiceUnavailableException(where + " cannot hold its locks"
          + (missing.isEmpty() ? "" : ": node" + (missing.size() == 1 ? " " : "s ") + missing + " unreachable for "
          + "longer than peerTimeout " + service.nativeSettings().peerTimeout().toMillis() + "ms")
          + (detail.isEmpty() ? "" : "; " + detail));
      case CANCELLED, CONTENDED, TIMED_OUT, REFUSED -> new IllegalStateException(where + " is over"
          + (detail.isEmpty() ? "" : ": " + detail));
    };
  }

  /** A held claim was lost: surrendered (asked for again by the core), or its lease ran out (for good). */
  private void lost(LeaseLostEvent e) {
    synchronized (this) {
      // a surrender is asked for again; a lost connection comes with the abort that says why
      if (!closed && ended == null && e.reason() != LeaseLostEvent.Reason.DEADLOCK
          && e.reason() != LeaseLostEvent.Reason.CONNECTION_LOST) {
        ended = new LeaseLostException("transaction " + txId + " on " + service.info().url() + " lost its lock on "
            + e.name() + " (" + e.reason() + (e.detail().isEmpty() ? "" : ": " + e.detail()) + "); it cannot hold"
            + " all its locks again: close it and begin another");
      }
      notifyAll();
    }
    for (Consumer<LeaseLostEvent> l : listeners) {
      try {
        l.accept(e);
      } catch (RuntimeException ignored) {
        // a listener's failure is its own
      }
    }
  }
}
