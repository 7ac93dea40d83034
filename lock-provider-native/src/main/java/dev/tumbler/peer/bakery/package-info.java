/**
 * Snaplock's quorum bakery among three elected leaders (NATIVE-ALGORITHMS §3, seed 003): {@link
 * dev.tumbler.peer.bakery.BakeryCore} and the roles it steps (client, owner, leader tables, view take-over,
 * restatement), its messages and their binary codec, its settings and its descriptor. Fault tolerant: one of three
 * leaders may be lost at any time.
 */
package dev.tumbler.peer.bakery;
