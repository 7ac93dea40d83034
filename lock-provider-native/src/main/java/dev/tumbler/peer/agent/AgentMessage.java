package dev.tumbler.peer.agent;

import dev.tumbler.peer.agent.LockTable.Entry;
import dev.tumbler.peer.agent.LockTable.Mode;
import dev.tumbler.peer.core.Output;
import dev.tumbler.peer.core.PeerMessage;
import java.util.List;
import java.util.Objects;

/**
 * The messages of the {@code agent} algorithm (design §4.6): from an agent to a lock server ({@link Lock},
 * {@link Surrender}, {@link End}, {@link Renew}, {@link Stamp}, and a node's {@link Restate} of all its agents'
 * entries), from a server to an agent ({@link Info}, {@link Renewed}, {@link Stamped}) and between agents
 * ({@link Forward}, {@link Surrendered}), and between nodes for an operator's listing ({@link ListHeld},
 * {@link Listing}). Every one carries the sender's Lamport clock, which the receiver
 * observes, so that a transaction begun after another one heard of has the larger id.
 */
public sealed interface AgentMessage extends PeerMessage {

  /** The sender's Lamport clock when it sent the message. */
  long clock();

  /**
   * {@code agent} asks for {@code path} in {@code mode} (a stronger mode on a path it has an entry on: an upgrade).
   * {@code tag}: who asks, for a server to say who holds a name ({@code Claim.tag()}: an election's candidate);
   * empty for none.
   */
  record Lock(long clock, AgentId agent, List<String> path, Mode mode, String tag) implements AgentMessage {
    public Lock {
      Objects.requireNonNull(agent, "agent");
      path = List.copyOf(path);
      Objects.requireNonNull(mode, "mode");
      Objects.requireNonNull(tag, "tag");
    }

    /** A request without a tag. */
    public Lock(long clock, AgentId agent, List<String> path, Mode mode) {
      this(clock, agent, path, mode, "");
    }
  }

  /**
   * {@code agent} gives up what it holds on {@code path} and the paths related to it, to break a deadlock; it was
   * chosen on the queue of {@code path} it knew at {@code version}.
   */
  record Surrender(long clock, AgentId agent, List<String> path, long version) implements AgentMessage {
    public Surrender {
      Objects.requireNonNull(agent, "agent");
      path = List.copyOf(path);
    }
  }

  /** {@code agent}'s transaction ended: every entry of it goes. */
  record End(long clock, AgentId agent) implements AgentMessage {
    public End {
      Objects.requireNonNull(agent, "agent");
    }
  }

  /**
   * {@code agent} keeps its entries for another {@code term} nanoseconds from now (the transaction's lease term);
   * {@code echo} is the agent's clock at sending, which the answer carries back.
   */
  record Renew(long clock, AgentId agent, long term, long echo) implements AgentMessage {
    public Renew {
      Objects.requireNonNull(agent, "agent");
      if (term <= 0) {
        throw new IllegalArgumentException("a lease term is positive: " + term);
      }
    }
  }

  /** The answer to {@link Renew}: the server renewed {@code agent}'s entries; {@code echo} as it came. */
  record Renewed(long clock, AgentId agent, long echo) implements AgentMessage {
    public Renewed {
      Objects.requireNonNull(agent, "agent");
    }
  }

  /**
   * {@code agent}'s claim on {@code path} holds on a quorum of its servers with token {@code t}: a server where its
   * entry holds raises its version to at least {@code t}'s, so that every later grant there has a larger token. With
   * {@code fresh} (the first of a read claim's two rounds) it also moves its version on by one and answers it: a
   * version no earlier than the ends of the grants that ended before the round.
   */
  record Stamp(long clock, AgentId agent, List<String> path, long t, boolean fresh) implements AgentMessage {
    public Stamp {
      Objects.requireNonNull(agent, "agent");
      path = List.copyOf(path);
    }
  }

  /** The answer to {@link Stamp}: whether the entry held and the version was raised, and the version then. */
  record Stamped(long clock, AgentId agent, List<String> path, long t, boolean ok, long version)
      implements AgentMessage {
    public Stamped {
      Objects.requireNonNull(agent, "agent");
      path = List.copyOf(path);
    }
  }

  /**
   * One entry a node restates: its agent asked for {@code path} in {@code mode} on the receiving server, with the
   * request's {@code tag} ({@link Lock#tag()}); {@code held} is the mode it holds there as its agent knows and
   * still trusts it, or null. A server that restarted takes the held modes back before it grants anything, so that
   * no agent is granted what another still holds by a grant of the server's previous life.
   */
  record Claimed(AgentId agent, List<String> path, Mode mode, Mode held, String tag) {
    public Claimed {
      Objects.requireNonNull(agent, "agent");
      path = List.copyOf(path);
      Objects.requireNonNull(mode, "mode");
      Objects.requireNonNull(tag, "tag");
    }

    /** An entry without a tag that holds nothing. */
    public Claimed(AgentId agent, List<String> path, Mode mode) {
      this(agent, path, mode, null, "");
    }

    /** An entry that holds nothing. */
    public Claimed(AgentId agent, List<String> path, Mode mode, String tag) {
      this(agent, path, mode, null, tag);
    }
  }

  /**
   * Sent first whenever a link comes up: every entry the sender's live agents asked the receiver for, and the
   * largest server version the sender has seen. The receiver drops the entries of the sender's agents that are
   * not restated (ended while the link was down, or lost with a restart of the sender), adds the ones it lacks
   * (it restarted, or the request was lost), raises its version to {@code version}, and tells each restated
   * agent the queue of each restated path, so that an agent learns again what it may have missed.
   */
  record Restate(long clock, long version, List<Claimed> entries) implements AgentMessage {
    public Restate {
      entries = List.copyOf(entries);
    }
  }

  /**
   * The queue of {@code path} on the sending server at {@code version}, for agent {@code to}: every entry on a
   * path related to it, in the server's order. {@code surrenderOf} is the agent whose surrender the change was
   * (the acknowledgement that agent waits for), or null.
   */
  record Info(long clock, AgentId to, List<String> path, long version, List<Entry> queue, AgentId surrenderOf)
      implements AgentMessage {
    public Info {
      Objects.requireNonNull(to, "to");
      path = List.copyOf(path);
      queue = List.copyOf(queue);
    }
  }

  /** A queue the sender knows, {@code path} on {@code server} at {@code version}, for agent {@code to} to analyse. */
  record Forward(long clock, AgentId to, List<String> path, String server, long version, List<Entry> queue)
      implements AgentMessage {
    public Forward {
      Objects.requireNonNull(to, "to");
      path = List.copyOf(path);
      Objects.requireNonNull(server, "server");
      queue = List.copyOf(queue);
    }
  }

  /**
   * Agent {@code by} surrendered {@code path} on {@code server}, whose queue it knew at {@code version}: {@code to}
   * forgets a stored queue of that lock no newer than that.
   */
  record Surrendered(long clock, AgentId to, AgentId by, List<String> path, String server, long version)
      implements AgentMessage {
    public Surrendered {
      Objects.requireNonNull(to, "to");
      Objects.requireNonNull(by, "by");
      path = List.copyOf(path);
      Objects.requireNonNull(server, "server");
    }
  }

  /**
   * What this member knows to be held under the names that start with one of {@code prefixes}, for an operator's
   * listing gathered by the sender: answered by {@link Listing}, by a lock server that is ready or not.
   */
  record ListHeld(long clock, long queryId, List<String> prefixes) implements AgentMessage {
    public ListHeld {
      prefixes = List.copyOf(prefixes);
    }
  }

  /**
   * The answer to {@link ListHeld} {@code queryId}, each time left counted from when the sender answered.
   *
   * @param ready whether the sender's lock server serves: a server still waiting for its peers' restatements after a
   *     restart has an empty table, which says nothing of the grants its previous life made
   * @param held the claims the sender's own agents hold as their clients were told, each with its token
   * @param parts the entries of the sender's lock table that hold a mode for an agent of another node: what tells of
   *     that node's claims when that node does not answer
   */
  record Listing(long clock, long queryId, boolean ready, List<Output.Listed> held, List<Part> parts)
      implements AgentMessage {
    public Listing {
      held = List.copyOf(held);
      parts = List.copyOf(parts);
    }
  }

  /**
   * One entry of a lock table that holds a mode, as a {@link Listing} gives it: {@code node} is the member the agent
   * lives on, {@code claim} its name, mode, holder (that node and the agent's tag) and the time left before the server
   * lets it go unheard, with no token (a part's version is not the claim's token).
   */
  record Part(String node, Output.Listed claim) {
    public Part {
      Objects.requireNonNull(node, "node");
      Objects.requireNonNull(claim, "claim");
    }
  }
}
