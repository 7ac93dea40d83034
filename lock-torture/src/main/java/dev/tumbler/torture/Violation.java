package dev.tumbler.torture;

import java.util.List;

/**
 * One thing the {@link Checker} found wrong in a history.
 *
 * @param kind the class of violation
 * @param name the lock name
 * @param summary one sentence: who, what, when (register sequence numbers)
 * @param seqs the events it rests on (kept in order): the history excerpt runs from the first to the last; the second
 *     is where the report marks it
 * @param causes the faults in the window that led to it ({@code restart #4 on redis-1}), or empty for none
 * @param promised whether the provider declares the capability that rules it out (a violation of a promise), or
 *     the run's own bound (waits, recovery)
 * @param promise what promises it, or why nothing does ({@code LOST_NOTIFICATION and FAULT_TOLERANT not both
 *     declared})
 */
public record Violation(Kind kind, String name, String summary, List<Long> seqs, List<String> causes,
    boolean promised, String promise) {

  public Violation {
    seqs = seqs.stream().sorted().toList();
    causes = List.copyOf(causes);
  }

  /** The classes of violation, in the order a report lists them. */
  public enum Kind {
    /** Two grants' writes to one name interleaved and the register accepted both: fencing did not protect. */
    SAFETY("safety", true, "writes of two grants interleaved and the register accepted the stale one"),
    /** A grant while another client's lease of the name was still valid by the reports' order. */
    LEASE_EXCLUSION("lease-exclusion", true, "a grant while another lease of the name was still valid"),
    /** The new holder wrote before the old holder's {@code onLost} arrived. */
    LOST_NOTIFICATION("lost-notification", true, "the new holder wrote before the old holder heard it lost"),
    /** Fencing tokens of one name not strictly increasing in grant order. */
    TOKEN_ORDER("token-order", true, "a grant's token not above the previous grant's"),
    /** A wait that ran past its bound plus the documented slack. */
    WAIT_BOUND("wait-bound", false, "a wait that ran past maxWait plus the slack"),
    /** A name that stayed unavailable after a fault healed for longer than the recovery bound. */
    RECOVERY("recovery", false, "a name unavailable after a fault healed, past the recovery bound");

    private final String label;
    private final boolean safety;
    private final String meaning;

    Kind(String label, boolean safety, String meaning) {
      this.label = label;
      this.safety = safety;
      this.meaning = meaning;
    }

    /** {@code lease-exclusion}, as the reports print it. */
    public String label() {
      return label;
    }

    /** A safety class (rather than a liveness one: waits, recovery). */
    public boolean safety() {
      return safety;
    }

    /** What it means, in a few words. */
    public String meaning() {
      return meaning;
    }
  }
}
