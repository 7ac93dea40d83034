package dev.tumbler.peer.composite;

import dev.tumbler.peer.core.PeerMessage;
import java.util.Objects;

/**
 * A message of one channel's core, as it travels between composite nodes.
 *
 * @param channel the core it is for (on the receiver) and from (on the sender)
 * @param body the core's own message
 */
public record Envelope(Channel channel, PeerMessage body) implements PeerMessage {
  public Envelope {
    Objects.requireNonNull(channel, "channel");
    Objects.requireNonNull(body, "body");
  }

  /** {@code channel/BodyType}, as in {@code lock/Request}. */
  @Override
  public String typeName() {
    return channel.label() + "/" + body.typeName();
  }
}
