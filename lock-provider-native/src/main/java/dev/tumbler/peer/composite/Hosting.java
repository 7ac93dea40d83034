package dev.tumbler.peer.composite;

import dev.tumbler.peer.algorithm.Algorithm;
import dev.tumbler.peer.algorithm.CoreContext;
import dev.tumbler.peer.core.MessageCodec;
import dev.tumbler.peer.core.PeerMessage;
import dev.tumbler.peer.core.ProtocolCore;
import dev.tumbler.peer.election.ElectionCodec;
import dev.tumbler.peer.election.ElectionCore;
import java.util.EnumMap;
import java.util.Map;

/**
 * What a node of a given lock algorithm hosts, and the codec of its envelopes: the one place the node
 * runtime and the simulator both build a node's core from, so that the simulator runs exactly what a node
 * runs. A node hosts its lock core, and an election core when its algorithm elects leaders; the semaphore
 * and transaction cores join here.
 */
public final class Hosting {

  private static final ElectionCodec ELECTION_CODEC = new ElectionCodec();

  private Hosting() {}

  /** A node's composite core for {@code lockAlgorithm}, with empty state. */
  public static CompositeCore core(Algorithm<?> lockAlgorithm, CoreContext context) {
    Map<Channel, ProtocolCore<? extends PeerMessage>> cores = new EnumMap<>(Channel.class);
    if (lockAlgorithm.elected()) {
      cores.put(Channel.ELECTION, new ElectionCore(context.self(), context.peers(), lockAlgorithm.election(context),
          context.random()));
    }
    cores.put(Channel.LOCK, lockAlgorithm.newCore(context));
    return new CompositeCore(cores);
  }

  /** The codec of the envelopes a node of {@code lockAlgorithm} sends and receives. */
  public static EnvelopeCodec codec(Algorithm<?> lockAlgorithm) {
    Map<Channel, MessageCodec<? extends PeerMessage>> codecs = new EnumMap<>(Channel.class);
    if (lockAlgorithm.elected()) {
      codecs.put(Channel.ELECTION, ELECTION_CODEC);
    }
    codecs.put(Channel.LOCK, lockAlgorithm.codec());
    return new EnvelopeCodec(codecs);
  }
}
