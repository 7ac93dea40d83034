/**
 * Lamport's logical-clock mutual exclusion and the Ricart–Agrawala variant: {@link
 * dev.tumbler.peer.lamport.LamportCore}, its messages and their binary codec. Not fault tolerant: every
 * peer must be up for a grant.
 */
package dev.tumbler.peer.lamport;
