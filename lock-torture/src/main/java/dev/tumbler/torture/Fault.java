package dev.tumbler.torture;

import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/** The faults a nemesis injects: three on clients, three on the servers the harness started itself. */
public enum Fault {
  /** SIGKILL a client (a holder, half the time), then start a new one in its place. */
  KILL(false),
  /** SIGSTOP a client (a holder, half the time) for longer than the lease term, then SIGCONT: a GC pause. */
  PAUSE(false),
  /** Cut a client off the backend through its proxies (bytes dropped both ways) for longer than the term, then heal. */
  PARTITION(false),
  /** SIGKILL one server, wait, start it again. */
  RESTART(true),
  /** SIGSTOP one server for longer than the lease term, then SIGCONT. */
  PAUSE_SERVER(true),
  /** SIGKILL the server that leads or serves the locks (ZooKeeper leader, Redis primary or master, lease server), wait for the backend to move on, start it again. */
  FAILOVER(true);

  private final boolean server;

  Fault(boolean server) {
    this.server = server;
  }

  /** Whether it hits a server (only where the harness started the backend itself). */
  public boolean server() {
    return server;
  }

  /** {@code pause-server}, as on the command line and in the history. */
  public String label() {
    return name().toLowerCase(Locale.ROOT).replace('_', '-');
  }

  /** The fault named {@code label}, or null. */
  public static Fault byLabel(String label) {
    for (Fault f : values()) {
      if (f.label().equals(label)) {
        return f;
      }
    }
    return null;
  }

  /** Whether the fault kind named {@code label} (as in a history) hits a server. */
  public static boolean isServer(String label) {
    Fault f = byLabel(label);
    return f != null && f.server;
  }

  /**
   * Parses a comma-separated list ({@code kill,pause,restart}); {@code none} is the empty set.
   *
   * @throws IllegalArgumentException naming an unknown fault and listing the known ones
   */
  public static Set<Fault> parse(String list) {
    Set<Fault> out = EnumSet.noneOf(Fault.class);
    if (list.trim().equals("none")) {
      return out;
    }
    for (String part : list.split(",")) {
      String s = part.trim();
      if (s.isEmpty()) {
        continue;
      }
      Fault f = byLabel(s);
      if (f == null) {
        throw new IllegalArgumentException("unknown nemesis '" + s + "'; known: " + String.join(", ", labels(
            EnumSet.allOf(Fault.class))) + " (or none)");
      }
      out.add(f);
    }
    return out;
  }

  /** The labels of {@code faults}, in declaration order. */
  public static List<String> labels(Set<Fault> faults) {
    List<String> l = new ArrayList<>();
    for (Fault f : values()) {
      if (faults.contains(f)) {
        l.add(f.label());
      }
    }
    return l;
  }
}
