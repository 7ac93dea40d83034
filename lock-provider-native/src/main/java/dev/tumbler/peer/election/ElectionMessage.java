package dev.tumbler.peer.election;

import dev.tumbler.peer.core.Leader;
import dev.tumbler.peer.core.PeerMessage;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * The messages of {@link ElectionCore} (NATIVE-ALGORITHMS §2.4, channel 0). A view on the wire is a term and
 * its leader list: term 0 with no leaders means "no view yet"; a term above 0 has 1 to
 * {@value ElectionSettings#MAX_LEADER_COUNT} leaders with distinct node ids. The records reject anything
 * else, so a decoded message is always well formed. Immutable.
 */
public sealed interface ElectionMessage extends PeerMessage {

  /** The answer to a {@link Propose}: granted, or why not. */
  enum Reason {
    /** The vote is granted; the voter promised not to vote for another proposal of this term or below. */
    GRANTED,
    /** The voter already knows this term or a higher one (voted, adopted or saw it). */
    STALE_TERM,
    /** The voter cannot know the highest term of the cluster yet (E11): it restarted and has not heard enough. */
    UNINFORMED,
    /** The voter started less than {@code leaderTimeout} ago: before its restart it may have acked a beat. */
    STARTING,
    /** A proposed leader is not connected to the voter (seed 003's DESIST). */
    NOT_CONNECTED,
    /** The voter acked a beat, within {@code leaderTimeout}, of a leader of its view that the proposal drops. */
    LEADER_ALIVE
  }

  /**
   * The first message on every link that comes up (seed 003's LOCKSTARTED), and sent again on a live link
   * whenever the sender becomes informed or learns a higher term, so that peers judge it by what it knows now.
   *
   * <p>A Hello sent first on a link asks for an answer ({@code answer} clear): its receiver answers with a
   * Hello of its own ({@code answer} set), even on a link it believes unbroken. Over TCP one end may be told
   * of a new link that the other end never hears of (a peer replaced its broken outbound connection), or hear
   * of the old link's break only after the new link's Hello arrived; the answer gives each end a Hello sent
   * after it was last told the link broke, which it needs before anything else from that peer counts. A Hello
   * re-sent on a live link, and an answer, ask for none, so Hellos never bounce back and forth.
   *
   * @param incarnation the sender's 63-bit nonce, drawn when its core started
   * @param priority the sender's priority, 1..15
   * @param randomId the sender's 28-bit random id, the second sort key
   * @param informed whether the sender knows the cluster's highest term (E11)
   * @param highestTerm the highest term the sender has seen
   * @param viewTerm the term of the sender's view; 0 for none
   * @param viewLeaders the leaders of the sender's view
   * @param answer whether the receiver should not answer it: set on an answer and on a Hello re-sent on a
   *     live link, clear on the first Hello on a link
   */
  record Hello(long incarnation, int priority, int randomId, boolean informed, long highestTerm, long viewTerm,
      List<Leader> viewLeaders, boolean answer) implements ElectionMessage {

    /** The largest random id: 28 bits (seed 003). */
    public static final int MAX_RANDOM_ID = (1 << 28) - 1;

    public Hello {
      if (incarnation < 0) {
        throw new IllegalArgumentException("negative incarnation " + incarnation);
      }
      if (priority < ElectionSettings.MIN_PRIORITY || priority > ElectionSettings.NEVER_LEADS) {
        throw new IllegalArgumentException("priority " + priority + " is not within 1..15");
      }
      if (randomId < 0 || randomId > MAX_RANDOM_ID) {
        throw new IllegalArgumentException("random id " + randomId + " is not a 28-bit number");
      }
      checkTerm("highest term", highestTerm);
      viewLeaders = view(viewTerm, viewLeaders);
    }
  }

  /** The conductor asks for votes: {@code leaders} shall lead {@code term} (E4). */
  record Propose(long term, List<Leader> leaders) implements ElectionMessage {
    public Propose {
      leaders = established(term, leaders);
    }
  }

  /**
   * The answer to a {@link Propose} of {@code term} (E5), with what the voter knows, so that a conductor
   * that is behind catches up.
   *
   * @param highestTerm the highest term the voter has seen
   * @param viewTerm the term of the voter's view; 0 for none
   * @param viewLeaders the leaders of the voter's view
   */
  record Vote(long term, Reason reason, long highestTerm, long viewTerm, List<Leader> viewLeaders)
      implements ElectionMessage {
    public Vote {
      checkTerm("term", term);
      Objects.requireNonNull(reason, "reason");
      checkTerm("highest term", highestTerm);
      viewLeaders = view(viewTerm, viewLeaders);
    }

    /** Whether the vote is granted. */
    public boolean granted() {
      return reason == Reason.GRANTED;
    }
  }

  /** The view of {@code term}, established (E6); also the answer to a peer that shows an older view (E9). */
  record Leaders(long term, List<Leader> leaders) implements ElectionMessage {
    public Leaders {
      leaders = established(term, leaders);
    }
  }

  /** A leader of the view of {@code term} renews its leader lease (E7); {@code seq} numbers its beats. */
  record Beat(long term, long seq) implements ElectionMessage {
    public Beat {
      checkTerm("term", term);
      if (term == 0 || seq < 0) {
        throw new IllegalArgumentException("a beat has a term and a sequence number: " + term + ", " + seq);
      }
    }
  }

  /**
   * The answer to the {@link Beat} {@code seq}: an acknowledgement when {@code term} is the beat's term; with
   * an older term (0: no view), a request for the leader's view, which it answers with {@link Leaders}.
   */
  record BeatAck(long term, long seq) implements ElectionMessage {
    public BeatAck {
      checkTerm("term", term);
      if (seq < 0) {
        throw new IllegalArgumentException("negative beat sequence number " + seq);
      }
    }
  }

  /**
   * The sender stops on purpose ({@code Input.Leave}: its daemon got SIGTERM). It stopped being an active leader
   * before it sent this, and in this incarnation it will not lead, vote, ack or conduct again; so a node that gets it
   * may elect a view without it at once, instead of waiting out its leader lease and the election delay.
   */
  record Retire(long term) implements ElectionMessage {
    public Retire {
      checkTerm("term", term);
    }
  }

  private static void checkTerm(String what, long term) {
    if (term < 0) {
      throw new IllegalArgumentException("negative " + what + " " + term);
    }
  }

  private static List<Leader> established(long term, List<Leader> leaders) {
    if (term <= 0) {
      throw new IllegalArgumentException("an established view has a positive term, not " + term);
    }
    return view(term, leaders);
  }

  private static List<Leader> view(long term, List<Leader> leaders) {
    checkTerm("view term", term);
    List<Leader> copy = List.copyOf(leaders);
    if ((term == 0) != copy.isEmpty() || copy.size() > ElectionSettings.MAX_LEADER_COUNT) {
      throw new IllegalArgumentException("a view of term " + term + " with " + copy.size() + " leaders");
    }
    Set<String> ids = new HashSet<>();
    for (Leader l : copy) {
      if (!ids.add(l.nodeId()) || l.incarnation() < 0) {
        throw new IllegalArgumentException("a view with a repeated node or a negative incarnation: " + copy);
      }
    }
    return copy;
  }
}
