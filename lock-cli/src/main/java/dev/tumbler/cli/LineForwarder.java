package dev.tumbler.cli;

import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;

/**
 * Forwards a byte stream (UTF-8) to a writer a line at a time, so that no character is cut between two writes
 * and each line shows as soon as it ends: the TCK's progress, a node's log on the command's standard output.
 * Thread safe.
 */
final class LineForwarder extends OutputStream {
  private final PrintWriter out;
  private final ByteArrayOutputStream line = new ByteArrayOutputStream();

  LineForwarder(PrintWriter out) {
    this.out = out;
  }

  @Override
  public synchronized void write(int b) {
    line.write(b);
    if (b == '\n') {
      flush();
    }
  }

  @Override
  public synchronized void write(byte[] b, int off, int len) {
    int start = off;
    for (int i = off; i < off + len; i++) {
      if (b[i] == '\n') {
        line.write(b, start, i + 1 - start);
        flush();
        start = i + 1;
      }
    }
    line.write(b, start, off + len - start);
  }

  @Override
  public synchronized void flush() {
    if (line.size() > 0) {
      out.write(line.toString(StandardCharsets.UTF_8));
      line.reset();
    }
    out.flush();
  }

  @Override
  public void close() {
    flush();
  }
}
