package dev.tumbler.peer.agent;

import dev.tumbler.lock.Capability;
import dev.tumbler.peer.algorithm.Algorithm;
import dev.tumbler.peer.algorithm.CoreContext;
import dev.tumbler.peer.core.MessageCodec;
import java.util.EnumSet;
import java.util.OptionalInt;
import java.util.Set;

/**
 * The descriptor of {@code agent}: seed 000's lock agents, a lock server on every node and one agent per
 * transaction, with hierarchical names and distributed deadlock resolution. A plain lock is a majority claim over
 * every member, so a cluster keeps locking with a minority of its nodes down. Capabilities per
 * NATIVE-ALGORITHMS §4.5: not {@code FAIR} (a surrender reorders a queue, and a claim on several nodes may be
 * queued in different orders on each), not {@code SEMAPHORE}. Immutable and thread safe.
 */
public final class AgentAlgorithm implements Algorithm<AgentMessage> {

  /** The name in URLs. */
  public static final String NAME = "agent";

  /** The one instance. */
  public static final AgentAlgorithm AGENT = new AgentAlgorithm();

  /** The most members a cluster may have: a token holds the index of the server that granted it in 10 bits. */
  public static final int MAX_NODES = 1024;

  private static final Set<Capability> CAPABILITIES = Set.copyOf(EnumSet.of(Capability.MUTEX, Capability.READ_WRITE,
      Capability.TRANSACTIONS, Capability.HIERARCHICAL_NAMES, Capability.QUORUM, Capability.FENCING,
      Capability.LEASE_EXPIRY, Capability.LOST_NOTIFICATION, Capability.LEADER_ELECTION, Capability.FAULT_TOLERANT));
  private static final AgentCodec CODEC = new AgentCodec();

  private AgentAlgorithm() {}

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public String summary() {
    return "seed 000's lock agents: transactions over hierarchical names with distributed deadlock resolution; "
        + "plain locks as majority claims, 3(N-1)+2[N/2] messages per entry (experimental)";
  }

  @Override
  public Set<Capability> capabilities() {
    return CAPABILITIES;
  }

  @Override
  public int maxNodes() {
    return MAX_NODES;
  }

  @Override
  public String maxNodesReason() {
    return "every queue change is told to each agent queued on a related path, and each node restates to every "
        + "other; a practical bound";
  }

  /**
   * {@inheritDoc} A node names the agent that holds the name on a majority of the members, by the queues it knows
   * (a candidate that does not lead waits on every member and hears them all), with the tag its request carried.
   */
  @Override
  public boolean answersHolderQueries() {
    return true;
  }

  /**
   * {@inheritDoc} No node knows every grant: a node asks every member, and lists what a majority of lock servers says,
   * each member's own claims by its word, those of a member that does not answer by its parts at the others.
   */
  @Override
  public boolean listsHeld() {
    return true;
  }

  @Override
  public MessageCodec<AgentMessage> codec() {
    return CODEC;
  }

  @Override
  public boolean leased() {
    return true;
  }

  /**
   * {@inheritDoc}
   *
   * @throws IllegalArgumentException if the context gives no lease term: an agent's entries always have one
   */
  @Override
  public AgentCore newCore(CoreContext context) {
    return new AgentCore(context);
  }

  /**
   * {@inheritDoc} §4.6, for a plain lock (a majority claim over every member): {@code Lock} and {@code Info} with
   * each other node, {@code Stamp} and {@code Stamped} with the {@code ⌊N/2⌋} other nodes whose parts complete the
   * majority (the client's own node is one of it), {@code End} to each other node: {@code 3(N−1) + 2⌊N/2⌋}.
   * Alone, 0. Renewals are background, as leases are for every leased algorithm.
   */
  @Override
  public OptionalInt messagesPerEntry(int nodes) {
    return nodes < 1 ? OptionalInt.empty() : OptionalInt.of(nodes == 1 ? 0 : 3 * (nodes - 1) + 2 * (nodes / 2));
  }

  @Override
  public String messagesPerEntryFormula() {
    return "3(N-1)+2[N/2]";
  }

  @Override
  public String toString() {
    return name();
  }
}
