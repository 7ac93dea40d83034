/**
 * The {@code agent} algorithm of seed 000 (Wiger and Arts' {@code locks}): transactions over hierarchical
 * lock names, with a lock server on every node and one agent per transaction that finds and breaks
 * deadlocks without a central wait-for graph (design: NATIVE-ALGORITHMS §4).
 *
 * <p>{@link dev.tumbler.peer.agent.AgentCore} runs the server and agent roles over the lock table
 * ({@link dev.tumbler.peer.agent.LockTable}), the agents' view of their queues ({@link dev.tumbler.peer.agent.AgentView})
 * and their deadlock analysis ({@link dev.tumbler.peer.agent.WaitFor}), with its messages and codec;
 * {@link dev.tumbler.peer.agent.AgentAlgorithm} makes it {@code algorithm=agent}. Where it departs from the design,
 * and why, is in the module README.
 */
package dev.tumbler.peer.agent;
