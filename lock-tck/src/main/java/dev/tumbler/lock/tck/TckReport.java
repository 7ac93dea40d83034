package dev.tumbler.lock.tck;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * The TCK's summary lines ({@code [tck chaos]}, {@code [tck timings]}): printed, and in a Maven build also appended to
 * {@code target/tck-report.txt}, one line each, so that every target's line survives. (A build keeps each test class's
 * output in a file named after the class, and the TCK's groups are the same nested classes in every target: the last
 * target to run a group would overwrite the others' lines.) Appends of one short line from several JVMs do not
 * interleave.
 */
final class TckReport {
  private static final Path FILE = Path.of("target", "tck-report.txt");

  private TckReport() {}

  static void line(String line) {
    System.out.println(line);
    if (!Files.isDirectory(FILE.getParent())) {
      return; // not in a build: the standalone runner prints only
    }
    try {
      Files.writeString(FILE, line + System.lineSeparator(), StandardCharsets.UTF_8, StandardOpenOption.CREATE,
          StandardOpenOption.APPEND);
    } catch (IOException e) {
      System.out.println("[tck] cannot append to " + FILE.toAbsolutePath() + ": " + e);
    }
  }
}
