package dev.tumbler.cli;

import java.io.OutputStream;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Where a node's log goes, standard output or a {@link RotatingFileStream}, for as long as the node runs.
 *
 * <p>How it reaches the log: slf4j-simple (2.0.x), the CLI's logger, writes every line to {@code System.err} as
 * it is at the time of the write (its {@code logFile} default, {@code System.err}, without
 * {@code cacheOutputStream}), under one lock, with a {@code println} and a {@code flush}. {@link #install} sets
 * {@code System.err} to the node's log, and {@link #close} puts the previous one back. Everything else written to
 * {@code System.err} meanwhile (a stack trace of an uncaught exception, say) goes to the log too. A JVM started
 * with {@code -Dorg.slf4j.simpleLogger.logFile} or {@code cacheOutputStream} set would keep its own target, so
 * those are refused.
 */
final class NodeLog implements AutoCloseable {
  /** The node's own logger; it logs at INFO unless {@code org.slf4j.simpleLogger.log.tumbler.node} says else. */
  static final String LOGGER = "tumbler.node";
  private static final String PREFIX = "org.slf4j.simpleLogger.";

  private final PrintStream stream;
  private final PrintStream previous;
  private final Logger logger;

  private NodeLog(PrintStream stream, PrintStream previous) {
    this.stream = stream;
    this.previous = previous;
    this.logger = LoggerFactory.getLogger(LOGGER);
  }

  /**
   * Sends the log to {@code file} (rotated at {@code maxBytes}, {@code files} kept), or to {@code out} when
   * {@code file} is empty. A log file that cannot be written is reported once on {@code err}, and the node goes on.
   *
   * @throws NodeConfig.ConfigException if slf4j-simple is configured to write elsewhere
   */
  static NodeLog install(Optional<Path> file, long maxBytes, int files, PrintWriter out, PrintWriter err) {
    String logFile = System.getProperty(PREFIX + "logFile");
    if (logFile != null && !logFile.equals("System.err")) {
      throw new NodeConfig.ConfigException("the JVM option -D" + PREFIX + "logFile=" + logFile + " sends the log "
          + "elsewhere: leave it out and use the node's key 'log'");
    }
    if (Boolean.parseBoolean(System.getProperty(PREFIX + "cacheOutputStream"))) {
      throw new NodeConfig.ConfigException("the JVM option -D" + PREFIX + "cacheOutputStream=true keeps the log "
          + "from moving to the node's key 'log': leave it out");
    }
    defaultProperty(PREFIX + "log." + LOGGER, "info");
    // read by slf4j-simple when its first logger is made, which in `tumbler node` is after this
    defaultProperty(PREFIX + "showDateTime", "true");
    defaultProperty(PREFIX + "dateTimeFormat", "yyyy-MM-dd'T'HH:mm:ss.SSSXXX");
    OutputStream target = file.isPresent()
        ? new RotatingFileStream(file.get(), maxBytes, files, line -> {
            err.println(line);
            err.flush();
          })
        : new LineForwarder(out);
    PrintStream stream = new PrintStream(target, true, StandardCharsets.UTF_8);
    PrintStream previous = System.err;
    System.setErr(stream);
    return new NodeLog(stream, previous);
  }

  private static void defaultProperty(String name, String value) {
    if (System.getProperty(name) == null) {
      System.setProperty(name, value);
    }
  }

  /** The node's own logger. */
  Logger logger() {
    return logger;
  }

  /** Puts the previous {@code System.err} back and closes the log. Idempotent. */
  @Override
  public void close() {
    stream.flush();
    if (System.err == stream) {
      System.setErr(previous);
    }
    stream.close();
  }
}
