package dev.tumbler.peer.bakery;

/**
 * The bakery's test-only mutations (NATIVE-ALGORITHMS §3.8): each breaks one rule, and the scripted tests and the
 * simulator must catch it. All off in production; a test switches one on right after the core is made, through
 * {@link BakeryCore#mutations}.
 */
final class Mutations {

  /** The owner grants its first READY ticket on its own table, without the activation quorum. */
  boolean activateOnOwnTable;

  /** {@code H} is 1 + the largest live ticket (no high-water mark, no owner floor). */
  boolean numberFromLiveTickets;

  /** A ticket is READY right after the AddTicket quorum, without waiting for entering requests. */
  boolean skipEnteringWait;

  /** A phase completes on ⌊L/2⌋ acknowledgements, the owner's own included. */
  boolean quorumOffByOne;

  /** A leader adds a ticket below a key it already agreed to activate in the term. */
  boolean addBelowActivated;

  /** A listing is answered by the first acting leader's tables, not a majority's. */
  boolean listFromOneLeader;
}
