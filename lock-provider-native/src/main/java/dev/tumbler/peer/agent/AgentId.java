package dev.tumbler.peer.agent;

/**
 * A transaction's agent: the node's Lamport clock when the transaction began, the node's index among the
 * members, and the node's own count of transactions. Ordered in that order, so that a transaction begun later
 * (by the clock) has the larger id: the one that gives way on a deadlock (design F-7).
 *
 * @param clock the beginning node's Lamport clock at the begin
 * @param node the beginning node's index among the members (ties between nodes)
 * @param seq the beginning node's count of its transactions (ties within a node)
 */
public record AgentId(long clock, int node, long seq) implements Comparable<AgentId> {

  public AgentId {
    if (clock < 0 || node < 0 || seq < 0) {
      throw new IllegalArgumentException("an agent id has no negative part: " + clock + "." + node + "." + seq);
    }
  }

  @Override
  public int compareTo(AgentId o) {
    int c = Long.compare(clock, o.clock);
    if (c == 0) {
      c = Integer.compare(node, o.node);
    }
    return c != 0 ? c : Long.compare(seq, o.seq);
  }

  @Override
  public String toString() {
    return clock + "." + node + "." + seq;
  }
}
