package dev.tumbler.peer.sim;

import java.util.HashMap;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.function.BooleanSupplier;

/**
 * Virtual time of one run and its event queue. Events run in the order of their time, and those due at the same
 * time in the order they were scheduled: that order, and nothing else, makes a seed replay the same run. Nodes read
 * time through their own drifting {@link Clock}s, and their cores' timers fire by those clocks ({@link Timers}).
 * Single-threaded.
 */
final class Scheduler {

  private record Event(long at, long seq, Runnable action) implements Comparable<Event> {
    @Override
    public int compareTo(Event o) {
      int c = Long.compare(at, o.at);
      return c != 0 ? c : Long.compare(seq, o.seq);
    }
  }

  /**
   * A node's monotonic clock, with a fixed rate error and offset. It outlives the node's crashes, as a machine's
   * clock outlives its process.
   */
  record Clock(double rate, long offset) {
    /** The clock's reading at real time {@code realNow}. */
    long local(long realNow) {
      return offset + (long) (realNow * rate);
    }

    /** The first real time at which the clock reads {@code localAt} or later. */
    long real(long localAt) {
      return (long) Math.ceil((localAt - offset) / rate);
    }
  }

  /**
   * The timers a node's core has set, by id: a timer set again replaces the earlier one, so that only the last one
   * set fires, as the node runtime's timers do.
   */
  static final class Timers {
    private final Map<Long, Long> set = new HashMap<>();
    private long tokens;

    void cancel(long id) {
      set.remove(id);
    }

    void clear() {
      set.clear();
    }
  }

  private final PriorityQueue<Event> queue = new PriorityQueue<>();
  private long now;
  private long seq;
  private long events;

  /** Real time now. */
  long now() {
    return now;
  }

  /** Events run so far. */
  long events() {
    return events;
  }

  /** {@code clock}'s reading now. */
  long local(Clock clock) {
    return clock.local(now);
  }

  /** Runs {@code action} at real time {@code at}, after every event already scheduled for that time. */
  void at(long at, Runnable action) {
    queue.add(new Event(at, seq++, action));
  }

  /**
   * Sets timer {@code id} of {@code timers} for when {@code clock} reads {@code localAt} (now, if that has passed):
   * it then runs {@code fire}, unless it was set again, cancelled or cleared, or {@code live} says the life of the
   * core that set it is over.
   */
  void setTimer(Timers timers, long id, Clock clock, long localAt, BooleanSupplier live, Runnable fire) {
    long token = ++timers.tokens;
    timers.set.put(id, token);
    at(Math.max(now, clock.real(localAt)), () -> {
      Long current = timers.set.get(id);
      if (live.getAsBoolean() && current != null && current == token) {
        timers.set.remove(id);
        fire.run();
      }
    });
  }

  /**
   * Runs the next event if one is due by {@code end}; false when none is. Time never goes back: an event scheduled
   * for the past runs now.
   */
  boolean runNext(long end) {
    Event e = queue.poll();
    if (e == null || e.at > end) {
      return false;
    }
    now = Math.max(now, e.at);
    e.action.run();
    events++;
    return true;
  }
}
