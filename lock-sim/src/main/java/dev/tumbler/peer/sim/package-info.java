/**
 * The deterministic simulator that every native algorithm is tested under: seeded, virtual drifting
 * clocks, FIFO links with random delays, cuts, flaps, partitions, crashes and restarts, invariant checks
 * after every step, delta-debugging of failing runs and a one-line replay command. A module of its own
 * ({@code lock-sim}) so that no production jar carries it; the simulation tests of every algorithm live in
 * its {@code src/test}.
 *
 * <p>{@link dev.tumbler.peer.sim.Simulation} is the entry point; the parts of a run, each one job, are listed in
 * its class comment and in the module's README.
 */
package dev.tumbler.peer.sim;
