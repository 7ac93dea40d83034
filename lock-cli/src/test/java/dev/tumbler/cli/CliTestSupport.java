package dev.tumbler.cli;

import java.io.PrintWriter;
import java.io.StringWriter;
import picocli.CommandLine;

/** Runs the command line in this JVM and captures what it prints. */
final class CliTestSupport {
  private CliTestSupport() {}

  record Result(int code, String out, String err) {
    @Override
    public String toString() {
      return "exit " + code + "\n--- out:\n" + out + "--- err:\n" + err;
    }
  }

  static Result run(String... args) {
    CommandLine cl = Tumbler.commandLine();
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    cl.setOut(new PrintWriter(out, true));
    cl.setErr(new PrintWriter(err, true));
    int code = cl.execute(args);
    return new Result(code, out.toString(), err.toString());
  }
}
