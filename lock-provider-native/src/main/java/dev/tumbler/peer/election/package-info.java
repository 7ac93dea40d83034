/**
 * The election of leaders that {@code bakery}, {@code lease} and {@code buckets} run on (seed 003's
 * "Elections" with terms, majority votes and leader leases): {@link dev.tumbler.peer.election.ElectionCore},
 * its settings, its messages and their binary codec. The core publishes views; it serves no lock itself.
 */
package dev.tumbler.peer.election;
