package dev.tumbler.peer.composite;

import dev.tumbler.peer.algorithm.Algorithm;
import dev.tumbler.peer.algorithm.CoreContext;
import dev.tumbler.peer.core.MessageCodec;
import dev.tumbler.peer.core.PeerMessage;
import dev.tumbler.peer.core.ProtocolCore;
import java.util.EnumMap;
import java.util.Map;

/**
 * What a node of a given lock algorithm hosts, and the codec of its envelopes: the one place the node
 * runtime and the simulator both build a node's core from, so that the simulator runs exactly what a node
 * runs. Today a node hosts its lock core; the election, semaphore and transaction cores join here.
 */
public final class Hosting {

  private Hosting() {}

  /** A node's composite core for {@code lockAlgorithm}, with empty state. */
  public static CompositeCore core(Algorithm<?> lockAlgorithm, CoreContext context) {
    Map<Channel, ProtocolCore<? extends PeerMessage>> cores = new EnumMap<>(Channel.class);
    cores.put(Channel.LOCK, lockAlgorithm.newCore(context));
    return new CompositeCore(cores);
  }

  /** The codec of the envelopes a node of {@code lockAlgorithm} sends and receives. */
  public static EnvelopeCodec codec(Algorithm<?> lockAlgorithm) {
    Map<Channel, MessageCodec<? extends PeerMessage>> codecs = new EnumMap<>(Channel.class);
    codecs.put(Channel.LOCK, lockAlgorithm.codec());
    return new EnvelopeCodec(codecs);
  }
}
