/**
 * The {@code agent} algorithm of seed 000 (Wiger and Arts' {@code locks}): transactions over hierarchical
 * lock names, with a lock server on every node and one agent per transaction that finds and breaks
 * deadlocks without a central wait-for graph (design: NATIVE-ALGORITHMS §4).
 *
 * <p>Under construction. What is here is the lock server's table ({@link dev.tumbler.peer.agent.LockTable}):
 * its entries, the grant rule over related paths, upgrades, surrender to the end of the queue and the
 * versions that stamp every change; and the agents' deadlock analysis ({@link dev.tumbler.peer.agent.WaitFor}):
 * the wait-for graph over the queues an agent knows, its first cycle and victim, or where to forward the
 * queues when there is none; and an agent's view of its queues ({@link dev.tumbler.peer.agent.AgentView}): the
 * version rule, the wait for a surrender's acknowledgement, and whether a claim meets its quorum. The agent core, its messages and codec, and the registry line that makes
 * {@code algorithm=agent} selectable come next; until then no service runs this package.
 */
package dev.tumbler.peer.agent;
