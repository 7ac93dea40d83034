/**
 * The election of leaders that {@code bakery}, {@code lease} and {@code buckets} run on (seed 003's
 * "Elections" with terms, majority votes and leader leases): {@link dev.tumbler.peer.election.ElectionCore},
 * its settings, its messages and their binary codec. The core publishes views; it serves no lock itself.
 *
 * <p>Beside it, what the algorithms served by the view's {@code leaders[0]} ({@code lease}, {@code buckets}) share:
 * {@link dev.tumbler.peer.election.ServerView}, what such a core takes from the view, and
 * {@link dev.tumbler.peer.election.ElectedServer}, the machine their cores extend (the view, the grace, restatements,
 * waiting requests, holder queries, the timer and the tokens of a term), each with its own table and messages.
 */
package dev.tumbler.peer.election;
