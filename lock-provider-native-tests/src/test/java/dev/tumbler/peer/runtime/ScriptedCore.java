package dev.tumbler.peer.runtime;

import dev.tumbler.peer.core.Input;
import dev.tumbler.peer.core.Output;
import dev.tumbler.peer.core.ProtocolCore;
import dev.tumbler.peer.lamport.LamportMessage;
import java.util.ArrayDeque;
import java.util.List;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

/**
 * A core for tests of {@link PeerNode}'s side of a step: it answers each acquire with the next outputs queued for it
 * (made from the acquire, so that they can name its request id), and everything else with nothing. It notes which
 * links it has been told are up: the node drops what a step sends on a link whose change the core has not yet taken.
 */
final class ScriptedCore implements ProtocolCore<LamportMessage> {
  final Queue<Function<Input.Acquire<LamportMessage>, List<Output<LamportMessage>>>> answers = new ArrayDeque<>();

  /** The peers whose link the core was last told is up. */
  final Set<String> up = ConcurrentHashMap.newKeySet();

  /** Queues outputs that do not depend on the acquire. */
  void answer(List<Output<LamportMessage>> outputs) {
    answers.add(a -> outputs);
  }

  @Override
  public List<Output<LamportMessage>> step(long now, Input<LamportMessage> input) {
    if (input instanceof Input.PeerUp<LamportMessage> u) {
      up.add(u.peer());
    } else if (input instanceof Input.PeerDown<LamportMessage> d) {
      up.remove(d.peer());
    }
    if (input instanceof Input.Acquire<LamportMessage> a && !answers.isEmpty()) {
      return answers.poll().apply(a);
    }
    return List.of();
  }

  @Override
  public String self() {
    return "n1";
  }

  @Override
  public String algorithm() {
    return "scripted";
  }
}
