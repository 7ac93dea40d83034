package dev.tumbler.cli;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.function.Consumer;

/**
 * A log file of bounded size: before a line that would take {@code node.log} past {@code maxBytes}, it becomes
 * {@code node.log.1}, the older ones shift ({@code .1} to {@code .2}, …), and at most {@code files} files are kept
 * in all, the oldest deleted. A line is never split between two files; a single line longer than {@code maxBytes}
 * fills a file of its own.
 *
 * <p>It never throws: a log that cannot be written (a full disk, a directory that is not writable or not there)
 * must not stop the node. The first failure is reported to {@code report}, the lines are dropped, and every later
 * line tries again; once one is written, that is reported too, with the count of lines dropped.
 *
 * <p>Thread safe. Writes go straight to the file, unbuffered: a line is on disk when its write returns.
 */
final class RotatingFileStream extends OutputStream {
  private final Path file;
  private final long maxBytes;
  private final int files;
  private final Consumer<String> report;

  private OutputStream out; // null while the file cannot be opened
  private long size;
  private boolean atLineStart = true;
  private boolean failing;
  private long dropped; // lines dropped since the failure
  private boolean closed;

  /**
   * Opens (appends to) {@code file}.
   *
   * @param maxBytes the size a file is kept under, at least 1
   * @param files how many files are kept in all, {@code file} included, at least 1
   * @param report told, in one line, when the log starts failing and when it works again
   */
  RotatingFileStream(Path file, long maxBytes, int files, Consumer<String> report) {
    if (maxBytes < 1 || files < 1) {
      throw new IllegalArgumentException("maxBytes " + maxBytes + " and files " + files + " must be at least 1");
    }
    this.file = file.toAbsolutePath();
    this.maxBytes = maxBytes;
    this.files = files;
    this.report = report;
    open();
  }

  /** {@code node.log.N}; {@code node.log} for 0. */
  Path numbered(int n) {
    return n == 0 ? file : file.resolveSibling(file.getFileName() + "." + n);
  }

  @Override
  public synchronized void write(int b) {
    write(new byte[] {(byte) b}, 0, 1);
  }

  @Override
  public synchronized void write(byte[] b, int off, int len) {
    if (closed) {
      return;
    }
    int end = off + len;
    int i = off;
    while (i < end) {
      int nl = i;
      while (nl < end && b[nl] != '\n') {
        nl++;
      }
      int segmentEnd = nl < end ? nl + 1 : end;
      writeSegment(b, i, segmentEnd - i);
      i = segmentEnd;
    }
  }

  /** A whole line, the start of one, or the rest of one. */
  private void writeSegment(byte[] b, int off, int len) {
    boolean endsLine = b[off + len - 1] == '\n';
    if (atLineStart) {
      if (out == null) {
        open();
      } else if (size > 0 && size + len > maxBytes) {
        rotate();
      }
    }
    atLineStart = endsLine;
    if (out == null) {
      dropped += endsLine ? 1 : 0;
      return;
    }
    try {
      out.write(b, off, len);
      size += len;
      if (failing && endsLine) {
        failing = false;
        report.accept("tumbler: the log file " + file + " is written again (" + dropped + " lines were dropped)");
      }
    } catch (IOException e) {
      fail(e);
      dropped += endsLine ? 1 : 0;
    }
  }

  private void open() {
    try {
      out = Files.newOutputStream(file, StandardOpenOption.CREATE, StandardOpenOption.APPEND,
          StandardOpenOption.WRITE);
      size = Files.size(file);
    } catch (IOException | UnsupportedOperationException e) {
      closeQuietly();
      fail(e);
    }
  }

  /** {@code .N-1} is deleted (and any older left by a larger {@code files} before), the others shift up by one. */
  private void rotate() {
    closeQuietly();
    try {
      for (int n = files; Files.exists(numbered(n)); n++) {
        Files.delete(numbered(n));
      }
      for (int n = files - 1; n >= 1; n--) {
        if (n == files - 1) {
          Files.deleteIfExists(numbered(n));
        } else if (Files.exists(numbered(n))) {
          Files.move(numbered(n), numbered(n + 1), StandardCopyOption.REPLACE_EXISTING);
        }
      }
      if (files == 1) {
        Files.deleteIfExists(file);
      } else {
        Files.move(file, numbered(1), StandardCopyOption.REPLACE_EXISTING);
      }
    } catch (IOException e) {
      fail(e); // appends to the file as it is; the next line tries again
    }
    open();
  }

  private void fail(Exception e) {
    if (!failing) {
      failing = true;
      dropped = 0;
      report.accept("tumbler: cannot write the log file " + file + " (" + e
          + "); log lines are dropped until it can be written again");
    }
  }

  private void closeQuietly() {
    if (out != null) {
      try {
        out.close();
      } catch (IOException e) {
        // nothing more to lose: the next open reports
      }
      out = null;
    }
  }

  @Override
  public synchronized void flush() {
    // unbuffered: every write is on its way to the file already
  }

  @Override
  public synchronized void close() {
    closed = true;
    closeQuietly();
  }
}
