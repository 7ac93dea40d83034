package dev.tumbler.peer.lamport;

import dev.tumbler.lock.Capability;
import dev.tumbler.peer.algorithm.Algorithm;
import dev.tumbler.peer.algorithm.CoreContext;
import dev.tumbler.peer.core.MessageCodec;
import java.util.EnumSet;
import java.util.OptionalInt;
import java.util.Set;

/**
 * The descriptors of {@code lamport} and {@code ricart-agrawala}: one core class, two rule sets. Grants
 * have no term, so neither takes {@code leaseTime}; every peer must be up for a grant, so neither is
 * fault tolerant. Tokens hold a {@value LamportCore#NODE_BITS}-bit node index.
 */
public final class LamportAlgorithm implements Algorithm<LamportMessage> {

  /** Lamport 1978: request, acknowledge, release; 3(N−1) messages per entry. */
  public static final LamportAlgorithm LAMPORT = new LamportAlgorithm(LamportCore.Variant.LAMPORT,
      "Lamport's logical-clock mutual exclusion, 3(N-1) messages per entry; every peer must be up", 3);

  /** Ricart–Agrawala 1981: request, deferred reply; 2(N−1) messages per entry. */
  public static final LamportAlgorithm RICART_AGRAWALA = new LamportAlgorithm(LamportCore.Variant.RICART_AGRAWALA,
      "Ricart-Agrawala's deferred replies, 2(N-1) messages per entry; every peer must be up", 2);

  private static final Set<Capability> CAPABILITIES = Set.copyOf(EnumSet.of(Capability.MUTEX,
      Capability.FENCING, Capability.FAIR));
  private static final LamportCodec CODEC = new LamportCodec();

  private final LamportCore.Variant variant;
  private final String summary;
  private final int messagesPerPeer;

  private LamportAlgorithm(LamportCore.Variant variant, String summary, int messagesPerPeer) {
    this.variant = variant;
    this.summary = summary;
    this.messagesPerPeer = messagesPerPeer;
  }

  @Override
  public String name() {
    return variant.urlName();
  }

  @Override
  public String summary() {
    return summary;
  }

  @Override
  public Set<Capability> capabilities() {
    return CAPABILITIES;
  }

  @Override
  public int maxNodes() {
    return LamportCore.MAX_NODES;
  }

  @Override
  public String maxNodesReason() {
    return "fencing tokens hold a " + LamportCore.NODE_BITS + "-bit node index";
  }

  @Override
  public MessageCodec<LamportMessage> codec() {
    return CODEC;
  }

  @Override
  public boolean leased() {
    return false;
  }

  /**
   * {@inheritDoc} The logical clock starts from the wall clock's microseconds: after a restart of the
   * whole cluster, new tokens are still above the old ones unless the clocks ran faster than a million
   * events a second, or the wall clock stepped back by more than the downtime.
   */
  @Override
  public LamportCore newCore(CoreContext context) {
    return new LamportCore(context.self(), context.peers(), variant, context.peerTimeoutNanos(),
        Math.min(Math.max(0, context.wallMicros()), LamportCore.MAX_CLOCK / 2));
  }

  @Override
  public OptionalInt messagesPerEntry(int nodes) {
    return OptionalInt.of(messagesPerPeer * (nodes - 1));
  }

  @Override
  public String messagesPerEntryFormula() {
    return messagesPerPeer + "(N-1)";
  }

  @Override
  public String toString() {
    return name();
  }
}
