package dev.tumbler.peer.lamport;

import dev.tumbler.peer.core.CodecException;
import dev.tumbler.peer.core.WireCodec;
import java.io.IOException;

/**
 * Binary encoding of {@link LamportMessage}: {@code version(1) type(1) fields}, one line a message
 * ({@link WireCodec}); names as modified UTF-8 with a 2-byte length. Decoding checks the version, the type, name
 * validity, timestamps, counts against the bytes left, and that nothing trails. Thread safe.
 */
public final class LamportCodec extends WireCodec<LamportMessage> {

  /** The encoding version this codec writes and reads. */
  public static final byte VERSION = 1;

  /**
   * The longest name on the wire: the provider's qualified name ({@code <length>:<namespace>/<name>}) with a
   * 3-digit length and a namespace and a name of 256 characters each.
   */
  static final int MAX_NAME_LENGTH = 3 + 1 + 256 + 1 + 256;

  /** The least bytes of a sync entry: an empty name, a timestamp, a flag (and one byte of a name to be valid). */
  private static final int MIN_ENTRY_BYTES = 2 + 1 + 8 + 1;

  private static final Table<LamportMessage> TABLE = table("lamport", VERSION, LamportMessage.class)
      .message(1, LamportMessage.Request.class, (m, o) -> o.name(m.name()).number(m.ts()).flag(m.attempt()),
          i -> new LamportMessage.Request(name(i), timestamp(i), i.flag()))
      .message(2, LamportMessage.Ack.class, (m, o) -> o.number(m.ts()),
          i -> new LamportMessage.Ack(timestamp(i)))
      .message(3, LamportMessage.Release.class, (m, o) -> o.name(m.name()).number(m.requestTs()).number(m.ts()),
          i -> new LamportMessage.Release(name(i), timestamp(i), timestamp(i)))
      .message(4, LamportMessage.Reply.class, (m, o) -> o.name(m.name()).number(m.requestTs()).number(m.ts()),
          i -> new LamportMessage.Reply(name(i), timestamp(i), timestamp(i)))
      .message(5, LamportMessage.Busy.class, (m, o) -> o.name(m.name()).number(m.requestTs()).number(m.ts()),
          i -> new LamportMessage.Busy(name(i), timestamp(i), timestamp(i)))
      .message(6, LamportMessage.Sync.class,
          (m, o) -> o.number(m.ts()).flag(m.answer())
              .list(m.entries(), (e, x) -> x.name(e.name()).number(e.requestTs()).flag(e.attempt())),
          i -> {
            long ts = timestamp(i);
            boolean answer = i.flag();
            return new LamportMessage.Sync(ts, i.list(MIN_ENTRY_BYTES, "sync entries",
                x -> new LamportMessage.Entry(name(x), timestamp(x), x.flag())), answer);
          });

  public LamportCodec() {
    super(TABLE);
  }

  /** A lock name, possibly behind a namespace prefix: never empty, no control characters. */
  private static String name(In in) throws IOException {
    String name = in.textOrEmpty(Integer.MAX_VALUE, "lock name");
    if (name.isEmpty() || name.length() > MAX_NAME_LENGTH) {
      throw new CodecException("lock name of " + name.length() + " characters in lamport message");
    }
    if (name.chars().anyMatch(Character::isISOControl)) {
      throw new CodecException("lock name with a control character in lamport message");
    }
    return name;
  }

  private static long timestamp(In in) throws IOException {
    long ts = in.number();
    if (ts < 0 || ts > LamportCore.MAX_CLOCK) {
      throw new CodecException("lamport timestamp out of range: " + ts);
    }
    return ts;
  }
}
