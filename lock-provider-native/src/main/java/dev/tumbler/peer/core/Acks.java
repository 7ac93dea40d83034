package dev.tumbler.peer.core;

import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.Set;
import java.util.TreeSet;

/**
 * The acknowledgements of one phase of a quorum protocol, counted once per distinct sender of the phase's
 * term or incarnation (design rule R-6): a second answer from the same sender, an answer from a node that
 * was not asked, or one of another term does not count. Seed 003 warns that its own implementation "does
 * not record who answered each message"; this is the record. Not thread safe, like the cores that use it.
 */
public final class Acks {

  private final long term;
  private final Set<String> asked;
  private final int needed;
  private final Set<String> answered = new LinkedHashSet<>();

  /**
   * @param term the term (or incarnation) the phase runs in; answers of another are ignored
   * @param asked who may answer (the sender itself included, when it counts its own acknowledgement)
   * @param needed how many distinct answers complete the phase, 1 to {@code asked.size()}
   */
  public Acks(long term, Collection<String> asked, int needed) {
    this.term = term;
    this.asked = Collections.unmodifiableSortedSet(new TreeSet<>(asked)); // one iteration order in every run
    if (needed < 1 || needed > this.asked.size()) {
      throw new IllegalArgumentException("a quorum of " + needed + " out of " + this.asked.size() + " cannot be met");
    }
    this.needed = needed;
  }

  /** A majority of {@code members}: {@code ⌊members/2⌋ + 1}. */
  public static int majority(int members) {
    if (members < 1) {
      throw new IllegalArgumentException("no majority of " + members + " members");
    }
    return members / 2 + 1;
  }

  /**
   * Records an answer.
   *
   * @return whether it counted: of this term, from a node that was asked, and its first
   */
  public boolean add(long answerTerm, String sender) {
    return answerTerm == term && asked.contains(sender) && answered.add(sender);
  }

  /** Whether enough distinct senders have answered. */
  public boolean reached() {
    return answered.size() >= needed;
  }

  /** Distinct senders that answered. */
  public int count() {
    return answered.size();
  }

  /** The phase's term. */
  public long term() {
    return term;
  }

  /** Who was asked and has not answered yet, sorted (for failure messages). */
  public Set<String> missing() {
    Set<String> m = new TreeSet<>(asked);
    m.removeAll(answered);
    return Collections.unmodifiableSet(m);
  }

  @Override
  public String toString() {
    return answered.size() + " of " + needed + " needed (term " + term + ", asked " + new TreeSet<>(asked) + ")";
  }
}
