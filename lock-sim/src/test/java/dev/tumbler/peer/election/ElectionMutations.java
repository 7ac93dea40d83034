package dev.tumbler.peer.election;

/**
 * Switches on the election core's test-only mutations from simulations in other packages (the switches are
 * package-private on {@link ElectionCore}, R-8).
 */
public final class ElectionMutations {

  private ElectionMutations() {}

  /** E5 ignores that a dropped leader is still alive: the simulator must see V-2 broken. */
  public static void voteWithoutLease(ElectionCore core) {
    core.mutationVoteWithoutLease = true;
  }

  /** A Hello on a link the core believes unbroken is not answered: with TCP-like link reports a node stalls. */
  public static void helloUnanswered(ElectionCore core) {
    core.mutationHelloUnanswered = true;
  }
}
