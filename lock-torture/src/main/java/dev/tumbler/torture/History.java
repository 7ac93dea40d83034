package dev.tumbler.torture;

import java.io.BufferedWriter;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * A run's history: its events in the register's order, kept in memory and written as they come to
 * {@code history.jsonl} (one JSON object a line), so that a run cut short still leaves what it saw. The checker
 * and the report read only this. Thread safe.
 */
public final class History implements AutoCloseable {
  /** The file name in a report directory. */
  public static final String FILE = "history.jsonl";

  private final List<Event> events = new ArrayList<>();
  private final BufferedWriter out;

  /** A history kept in memory only. */
  public History() {
    this.out = null;
  }

  /** A history also written to {@code file} (created or truncated). */
  public History(Path file) {
    try {
      Files.createDirectories(file.toAbsolutePath().getParent());
      this.out = Files.newBufferedWriter(file, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write the history to " + file, e);
    }
  }

  /** Appends an event that the register stamped; events must come in {@code seq} order. */
  synchronized void append(Event e) {
    if (!events.isEmpty() && events.getLast().seq() >= e.seq()) {
      throw new IllegalStateException("event " + e.seq() + " after " + events.getLast().seq());
    }
    events.add(e);
    if (out != null) {
      try {
        out.write(e.toJson());
        out.newLine();
      } catch (IOException ex) {
        throw new UncheckedIOException("cannot write the history", ex);
      }
    }
  }

  /** Pushes what was written to the file. */
  public synchronized void flush() {
    if (out != null) {
      try {
        out.flush();
      } catch (IOException e) {
        throw new UncheckedIOException("cannot write the history", e);
      }
    }
  }

  /** A copy of the events so far, in order. */
  public synchronized List<Event> events() {
    return List.copyOf(events);
  }

  public synchronized int size() {
    return events.size();
  }

  @Override
  public synchronized void close() {
    if (out != null) {
      try {
        out.close();
      } catch (IOException e) {
        throw new UncheckedIOException("cannot write the history", e);
      }
    }
  }

  /**
   * Reads a {@code history.jsonl}.
   *
   * @throws IllegalArgumentException naming the line, if one is not an event or the order is broken
   */
  public static List<Event> read(Path file) throws IOException {
    List<Event> list = new ArrayList<>();
    int n = 0;
    for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
      n++;
      if (line.isBlank()) {
        continue;
      }
      Event e;
      try {
        e = Event.fromJson(line);
      } catch (IllegalArgumentException ex) {
        throw new IllegalArgumentException(file + ":" + n + ": " + ex.getMessage(), ex);
      }
      if (!list.isEmpty() && list.getLast().seq() >= e.seq()) {
        throw new IllegalArgumentException(file + ":" + n + ": seq " + e.seq() + " does not follow "
            + list.getLast().seq());
      }
      list.add(e);
    }
    return list;
  }
}
