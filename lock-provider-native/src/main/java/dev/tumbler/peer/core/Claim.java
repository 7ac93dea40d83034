package dev.tumbler.peer.core;

import java.util.List;
import java.util.Objects;

/**
 * What a client request asks a core for: a path, a mode, and for semaphores ({@link Mode#PERMITS}) a
 * number of permits out of a limit. A plain {@code Lock} is an {@link Mode#EXCLUSIVE} claim on a
 * one-element path; a flat name is always one element, so {@code a/b} is one name and never a hierarchy
 * (only transactions claim paths of several elements). Immutable.
 *
 * <p>Conflicts: two lock claims conflict when their paths are related (equal, or for transactions one a
 * prefix of the other) and their modes are not both {@link Mode#READ}; {@link Mode#PERMITS} claims on one
 * name never conflict pairwise, their sum is bounded by the limit.
 *
 * @param path the names, outermost first: 1 to {@value #MAX_DEPTH} non-empty elements (the elements the
 *     core sees are already qualified by the provider's namespace)
 * @param mode exclusive, read or write
 * @param permits how many permits: 1, except for {@link Mode#PERMITS} ({@code 1..limit})
 * @param limit the permits there are: 1, except for {@link Mode#PERMITS} (the handle's {@code maxPermits})
 * @param writer how a {@link Mode#WRITE} claim waits among readers; {@link Writer#HARD} for every other mode
 * @param quietNanos with {@link Writer#TIMED_SOFT}, how long no reader may have been granted before the
 *     writer is; 0 otherwise
 * @param tag who makes the claim, for a core that can say who holds a name ({@link Input.HolderQuery}): an
 *     election's candidate id; empty for none. Never part of what the claim excludes.
 */
public record Claim(List<String> path, Mode mode, int permits, int limit, Writer writer, long quietNanos,
    String tag) {

  /** The longest path a claim may name. */
  public static final int MAX_DEPTH = 16;

  /** The longest tag a claim may carry, in characters (so that every codec can carry it). */
  public static final int MAX_TAG_LENGTH = 512;

  /** What a claim excludes. */
  public enum Mode {
    /** A plain lock: excludes every other claim on the name. Conflicts like {@link #WRITE}. */
    EXCLUSIVE,
    /** A shared claim: excludes writers only. */
    READ,
    /** The write side of a read/write lock: excludes readers and writers. */
    WRITE,
    /**
     * Permits of a semaphore: claims never conflict pairwise, their permits together stay within the
     * limit. A mode of its own (not an exclusive claim with a limit) so that a one-permit semaphore is
     * still a semaphore, served by the semaphore core.
     */
    PERMITS
  }

  /** How a writer waits while readers come and go (seed 003's writer modes). */
  public enum Writer {
    /** Takes its place in the queue: readers that come after it wait behind it. */
    HARD,
    /** Keeps no place: later readers still get in; it is granted when no reader holds or waits. */
    SOFT,
    /** As {@link #SOFT}, and only once no reader has been granted for {@link Claim#quietNanos()}. */
    TIMED_SOFT
  }

  public Claim {
    Objects.requireNonNull(path, "path");
    Objects.requireNonNull(mode, "mode");
    Objects.requireNonNull(writer, "writer");
    Objects.requireNonNull(tag, "tag");
    path = List.copyOf(path);
    if (path.isEmpty() || path.size() > MAX_DEPTH) {
      throw new IllegalArgumentException("a claim's path has 1 to " + MAX_DEPTH + " elements: " + path);
    }
    for (String e : path) {
      if (e.isEmpty()) {
        throw new IllegalArgumentException("a claim's path has an empty element: " + path);
      }
    }
    if (limit < 1 || permits < 1 || permits > limit) {
      throw new IllegalArgumentException("a claim asks for 1 to limit permits: " + permits + " of " + limit);
    }
    if (limit > 1 && mode != Mode.PERMITS) {
      throw new IllegalArgumentException("only a PERMITS claim has a limit above 1, not " + mode);
    }
    if (mode == Mode.PERMITS && path.size() != 1) {
      throw new IllegalArgumentException("a PERMITS claim names one semaphore: " + path);
    }
    if (writer != Writer.HARD && mode != Mode.WRITE) {
      throw new IllegalArgumentException("a " + writer + " writer mode on a " + mode + " claim");
    }
    if ((writer == Writer.TIMED_SOFT) != (quietNanos > 0)) {
      throw new IllegalArgumentException("a quiet period (" + quietNanos + " ns) goes with TIMED_SOFT writers "
          + "only, and they need one");
    }
    if (tag.length() > MAX_TAG_LENGTH || tag.chars().anyMatch(Character::isISOControl)) {
      throw new IllegalArgumentException("a claim's tag has at most " + MAX_TAG_LENGTH
          + " characters and no control character: " + tag.length() + " characters");
    }
  }

  /** A claim without a tag. */
  public Claim(List<String> path, Mode mode, int permits, int limit, Writer writer, long quietNanos) {
    this(path, mode, permits, limit, writer, quietNanos, "");
  }

  /** This claim made by {@code tag} (see {@link #tag()}). */
  public Claim withTag(String tag) {
    return new Claim(path, mode, permits, limit, writer, quietNanos, tag);
  }

  /** A plain lock on {@code name}. */
  public static Claim exclusive(String name) {
    return new Claim(List.of(name), Mode.EXCLUSIVE, 1, 1, Writer.HARD, 0);
  }

  /** The read side of the read/write lock {@code name}. */
  public static Claim read(String name) {
    return new Claim(List.of(name), Mode.READ, 1, 1, Writer.HARD, 0);
  }

  /** The write side of the read/write lock {@code name}, waiting as {@code writer} says. */
  public static Claim write(String name, Writer writer, long quietNanos) {
    return new Claim(List.of(name), Mode.WRITE, 1, 1, writer, quietNanos);
  }

  /** {@code permits} of the semaphore {@code name}, which this handle sees with {@code limit} permits. */
  public static Claim permits(String name, int permits, int limit) {
    return new Claim(List.of(name), Mode.PERMITS, permits, limit, Writer.HARD, 0);
  }

  /** A transaction's claim on {@code path}. */
  public static Claim tx(List<String> path, Mode mode) {
    return new Claim(path, mode, 1, 1, Writer.HARD, 0);
  }

  /** The single element of a flat claim; for a path, its elements joined by {@code /} (for messages only). */
  public String name() {
    return path.size() == 1 ? path.get(0) : String.join("/", path);
  }

  /** Whether this claim is a plain exclusive lock on one name: all a core without modes can serve. */
  public boolean isPlainLock() {
    return path.size() == 1 && mode == Mode.EXCLUSIVE;
  }
}
