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

  /** Runs {@code tumbler node ARGS} with {@code env} as its whole environment. */
  static Result runNode(java.util.Map<String, String> env, String... args) {
    CommandLine cl = Tumbler.commandLine();
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    cl.setOut(new PrintWriter(out, true));
    cl.setErr(new PrintWriter(err, true));
    NodeCommand node = cl.getSubcommands().get("node").getCommand();
    node.env = env;
    String[] all = new String[args.length + 1];
    all[0] = "node";
    System.arraycopy(args, 0, all, 1, args.length);
    int code = cl.execute(all);
    return new Result(code, out.toString(), err.toString());
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
