package dev.tumbler.peer.leaderlock;

import dev.tumbler.peer.core.Claim;
import dev.tumbler.peer.core.PeerMessage;
import java.util.Objects;

/**
 * The messages of {@link LeaderLockCore}. A client numbers every message it sends ({@code seq}, per
 * incarnation {@code inc}); the server's grants and renewals echo the highest {@code seq} of that client it
 * had processed when it decided (the echo rule, NATIVE-ALGORITHMS §2.3).
 */
sealed interface LeaderLockMessage extends PeerMessage {

  /** Client to server: asks for {@code name} in {@code mode} (exclusive, read or write). */
  record Acquire(long inc, long seq, long requestId, String name, Claim.Mode mode, boolean attempt)
      implements LeaderLockMessage {
    public Acquire {
      Objects.requireNonNull(name, "name");
      Objects.requireNonNull(mode, "mode");
    }
  }

  /** Client to server, every T/3 while a request waits: it is still wanted (and what it is, for a new server). */
  record Waiting(long inc, long seq, long requestId, String name, Claim.Mode mode, boolean attempt)
      implements LeaderLockMessage {
    public Waiting {
      Objects.requireNonNull(name, "name");
      Objects.requireNonNull(mode, "mode");
    }
  }

  /** Client to server: keep the grant of {@code requestId} for another term. */
  record Renew(long inc, long seq, long requestId) implements LeaderLockMessage {}

  /** Client to server: the grant (or the wait) of {@code requestId} is over. */
  record Release(long inc, long seq, long requestId) implements LeaderLockMessage {}

  /** Server to client: {@code requestId} is granted with {@code token}, decided after the client's {@code echo}. */
  record Grant(long term, long requestId, long echo, long token) implements LeaderLockMessage {}

  /** Server to client: the grant of {@code requestId} is extended, decided after the client's {@code echo}. */
  record Renewed(long term, long requestId, long echo) implements LeaderLockMessage {}

  /** Server to client: the single attempt {@code requestId} found its claim taken. */
  record Busy(long term, long requestId) implements LeaderLockMessage {}

  /** Server to client: the server does not know the grant of {@code requestId} (any more). */
  record Revoked(long term, long requestId) implements LeaderLockMessage {}
}
