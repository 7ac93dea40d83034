package dev.tumbler.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class NodeLogTest {
  @TempDir
  Path dir;

  /** Line {@code i}, 25 bytes with its line break. */
  private static String line(int i) {
    return String.format("line %02d of the node logs\n", i);
  }

  private List<String> logFiles() throws IOException {
    try (Stream<Path> s = Files.list(dir)) {
      return s.map(p -> p.getFileName().toString()).sorted().collect(Collectors.toList());
    }
  }

  @Test
  void aFullFileBecomesDotOneTheOlderShiftAndTheOldestIsDeleted() throws IOException {
    Path log = dir.resolve("node.log");
    List<String> reported = new ArrayList<>();
    assertEquals(25, line(0).length());
    try (RotatingFileStream s = new RotatingFileStream(log, 100, 3, reported::add);
        PrintStream out = new PrintStream(s, true, StandardCharsets.UTF_8)) {
      for (int i = 0; i < 20; i++) {
        out.print(line(i));
      }
    }
    // four lines of 25 bytes fill a file of 100: a fifth would exceed it
    assertEquals(List.of("node.log", "node.log.1", "node.log.2"), logFiles(), "3 files in all");
    assertEquals(line(8) + line(9) + line(10) + line(11), Files.readString(dir.resolve("node.log.2")));
    assertEquals(line(12) + line(13) + line(14) + line(15), Files.readString(dir.resolve("node.log.1")));
    assertEquals(line(16) + line(17) + line(18) + line(19), Files.readString(log));
    assertEquals(List.of(), reported);
  }

  @Test
  void aFileIsAppendedToAtStartAndCountsTowardTheSize() throws IOException {
    Path log = dir.resolve("node.log");
    Files.writeString(log, line(0) + line(1) + line(2));
    try (RotatingFileStream s = new RotatingFileStream(log, 100, 2, m -> {})) {
      for (int i = 3; i < 7; i++) {
        s.write(line(i).getBytes(StandardCharsets.UTF_8));
      }
    }
    assertEquals(line(0) + line(1) + line(2) + line(3), Files.readString(dir.resolve("node.log.1")));
    assertEquals(line(4) + line(5) + line(6), Files.readString(log));
  }

  @Test
  void aLineIsNeverSplitBetweenFilesAndALongOneHasAFileOfItsOwn() throws IOException {
    Path log = dir.resolve("node.log");
    String longLine = "x".repeat(150) + "\n";
    try (RotatingFileStream s = new RotatingFileStream(log, 100, 4, m -> {})) {
      byte[] two = (line(0) + line(1)).getBytes(StandardCharsets.UTF_8);
      s.write(two, 0, 30); // a line and a half in one write, then the rest
      s.write(two, 30, two.length - 30);
      s.write(longLine.getBytes(StandardCharsets.UTF_8));
      s.write(line(2).getBytes(StandardCharsets.UTF_8));
    }
    assertEquals(line(0) + line(1), Files.readString(dir.resolve("node.log.2")));
    assertEquals(longLine, Files.readString(dir.resolve("node.log.1")));
    assertEquals(line(2), Files.readString(log));
  }

  @Test
  void oneFileInAllStartsAgainEmpty() throws IOException {
    Path log = dir.resolve("node.log");
    try (RotatingFileStream s = new RotatingFileStream(log, 60, 1, m -> {})) {
      for (int i = 0; i < 5; i++) {
        s.write(line(i).getBytes(StandardCharsets.UTF_8));
      }
    }
    assertEquals(List.of("node.log"), logFiles());
    assertEquals(line(4), Files.readString(log));
  }

  @Test
  void aFullDiskIsReportedOnceAndNothingThrows() throws IOException {
    Path full = Path.of("/dev/full"); // every write: ENOSPC
    assumeTrue(Files.isWritable(full), "no /dev/full here");
    List<String> reported = new ArrayList<>();
    try (RotatingFileStream s = new RotatingFileStream(full, 100, 3, reported::add);
        PrintStream out = new PrintStream(s, true, StandardCharsets.UTF_8)) {
      for (int i = 0; i < 50; i++) {
        out.print(line(i));
      }
      assertFalse(out.checkError(), "the stream never failed its writer");
    }
    assertEquals(1, reported.size(), reported.toString());
    assertTrue(reported.get(0).startsWith("tumbler: cannot write the log file /dev/full ("), reported.get(0));
    assertTrue(reported.get(0).endsWith("log lines are dropped until it can be written again"), reported.get(0));
  }

  @Test
  void aDirectoryThatCannotHoldTheLogIsReportedOnceAndTheLogComesBackWhenItCan() throws IOException {
    Path notADirectory = dir.resolve("logs");
    Files.writeString(notADirectory, "a file where the log's directory should be");
    Path log = notADirectory.resolve("node.log");
    List<String> reported = new ArrayList<>();
    try (RotatingFileStream s = new RotatingFileStream(log, 100, 3, reported::add)) {
      for (int i = 0; i < 3; i++) {
        s.write(line(i).getBytes(StandardCharsets.UTF_8));
      }
      assertEquals(1, reported.size(), reported.toString());
      assertTrue(reported.get(0).startsWith("tumbler: cannot write the log file " + log), reported.get(0));
      Files.delete(notADirectory);
      Files.createDirectory(notADirectory);
      s.write(line(3).getBytes(StandardCharsets.UTF_8));
    }
    assertEquals(line(3), Files.readString(log));
    assertEquals(List.of(reported.get(0), "tumbler: the log file " + log + " is written again (3 lines were "
        + "dropped)"), reported);
  }

  @Test
  void slf4jSimpleWritesToTheRotatingFileWhileTheLogIsInstalled() throws IOException {
    PrintStream before = System.err;
    Path log = dir.resolve("node.log");
    StringWriter err = new StringWriter();
    try (NodeLog nodeLog = NodeLog.install(Optional.of(log), 400, 3, new PrintWriter(new StringWriter()),
        new PrintWriter(err))) {
      for (int i = 0; i < 40; i++) {
        nodeLog.logger().info("message {} through slf4j", String.format("%02d", i));
      }
    }
    assertSame(before, System.err, "System.err is put back");
    assertEquals(List.of("node.log", "node.log.1", "node.log.2"), logFiles());
    List<String> lines = new ArrayList<>();
    for (String name : List.of("node.log.2", "node.log.1", "node.log")) {
      String content = Files.readString(dir.resolve(name));
      assertTrue(content.length() <= 400 || content.lines().count() == 1, name + ": " + content);
      // another test's threads may log meanwhile, to the same System.err: only this test's lines are counted
      content.lines().filter(l -> l.contains(" through slf4j")).forEach(lines::add);
    }
    assertTrue(lines.size() >= 8, "the last files hold the last lines: " + lines);
    int first = 40 - lines.size();
    for (int i = 0; i < lines.size(); i++) {
      String expected = String.format("INFO tumbler.node - message %02d through slf4j", first + i);
      assertTrue(lines.get(i).endsWith(expected), "in order, none missing, the last one last: " + lines);
    }
    assertEquals("", err.toString());
  }

  @Test
  void logStdoutWritesTheLinesToTheCommandsOutput() {
    PrintStream before = System.err;
    StringWriter out = new StringWriter();
    try (NodeLog nodeLog = NodeLog.install(Optional.empty(), 1, 1, new PrintWriter(out), new PrintWriter(out))) {
      nodeLog.logger().info("to stdout: {}", "é, ü");
    }
    assertSame(before, System.err);
    assertTrue(out.toString().contains("INFO tumbler.node - to stdout: é, ü" + System.lineSeparator()),
        out.toString());
  }
}
