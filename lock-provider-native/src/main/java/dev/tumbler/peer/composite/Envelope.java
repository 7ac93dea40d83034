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

  /** Per body class, the type name on each channel (by ordinal), filled in as first sent. */
  private static final ClassValue<String[]> TYPE_NAMES = new ClassValue<>() {
    @Override
    protected String[] computeValue(Class<?> type) {
      return new String[Channel.values().length];
    }
  };

  /**
   * {@code channel/BodyType}, as in {@code lock/Request}. Counted on every send, so it is built once per
   * channel and body class (a message's type name depends on its class only); two threads that build the
   * same name at once store equal strings.
   */
  @Override
  public String typeName() {
    String[] names = TYPE_NAMES.get(body.getClass());
    int i = channel.ordinal();
    String name = names[i];
    if (name == null) {
      name = channel.label() + "/" + body.typeName();
      names[i] = name;
    }
    return name;
  }
}
