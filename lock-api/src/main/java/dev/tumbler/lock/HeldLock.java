package dev.tumbler.lock;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * One grant the backend holds under a service's namespace, as {@link LockService#heldLocks()} lists it:
 * for operators, not for deciding who may write (a listing is stale as soon as it is read).
 *
 * @param name the lock's name, as the application gave it
 * @param kind {@code mutex}, {@code read}, {@code write}, {@code semaphore} or {@code election}
 * @param holder who holds it, in the backend's own terms (the Redis owner value, the ZooKeeper lock node,
 *     the JDBC owner column): enough to find the holder's process in its logs
 * @param token a fencing token the backend stores for this name, when it stores one; see {@code tokenIsHolders}
 * @param tokenIsHolders true if {@code token} is the holder's own grant token; false if it is the last token
 *     issued for the name, which is at least the holder's (Redis keeps only a counter per name)
 * @param remaining how long the grant lasts without a renewal, where the backend keeps a term; empty for a
 *     grant bound to a session or held until released
 */
public record HeldLock(String name, String kind, String holder, OptionalLong token, boolean tokenIsHolders,
    Optional<Duration> remaining) {
  public HeldLock {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(kind, "kind");
    Objects.requireNonNull(holder, "holder");
    Objects.requireNonNull(token, "token");
    Objects.requireNonNull(remaining, "remaining");
    if (tokenIsHolders && token.isEmpty()) {
      throw new IllegalArgumentException("tokenIsHolders without a token");
    }
  }
}
