/**
 * The deterministic simulator that every native algorithm is tested under: seeded, virtual drifting
 * clocks, FIFO links with random delays, cuts, flaps, partitions, crashes and restarts, invariant checks
 * after every step, delta-debugging of failing runs and a one-line replay command. Main code so later
 * algorithms and benchmarks reuse it; the tests that drive it live in {@code src/test}.
 */
package dev.tumbler.peer.sim;
