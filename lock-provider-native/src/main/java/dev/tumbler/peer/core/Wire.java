package dev.tumbler.peer.core;

import java.io.DataInputStream;
import java.io.IOException;

/**
 * Checked reads for the binary codecs: every value a peer sends is checked before it is used, and a bad one is a
 * {@link CodecException} naming the codec and the field, never an allocation or a negative id. The codecs made of a
 * table ({@link WireCodec}) read through its {@link WireCodec.In}, which uses these. Stateless.
 */
public final class Wire {

  private Wire() {}

  /** A long that may not be negative (a token, a version, an id). */
  public static long nonNegative(DataInputStream in, String codec, String what) throws IOException {
    long v = in.readLong();
    if (v < 0) {
      throw new CodecException("negative " + what + " in " + codec + " message: " + v);
    }
    return v;
  }

  /** An int from 1 to {@code max}. */
  public static int positive(DataInputStream in, int max, String codec, String what) throws IOException {
    int v = in.readInt();
    if (v < 1 || v > max) {
      throw new CodecException(what + " " + v + " in " + codec + " message (1 to " + max + ")");
    }
    return v;
  }

  /**
   * A count of items of at least {@code minBytes} bytes each, checked against the bytes left: a corrupt count is
   * refused, never allocated.
   */
  public static int count(DataInputStream in, int minBytes, String codec, String what) throws IOException {
    int n = in.readInt();
    if (n < 0 || n > in.available() / minBytes) {
      throw new CodecException(codec + " message claims " + n + " " + what + " in " + in.available() + " bytes");
    }
    return n;
  }

  /** A string of 1 to {@code max} characters with no control character (a name, a node id, a session). */
  public static String text(DataInputStream in, int max, String codec, String what) throws IOException {
    String s = in.readUTF();
    if (s.isEmpty() || s.length() > max) {
      throw new CodecException(what + " of " + s.length() + " characters in " + codec + " message (1 to " + max + ")");
    }
    for (int i = 0; i < s.length(); i++) {
      if (Character.isISOControl(s.charAt(i))) {
        throw new CodecException(what + " with a control character in " + codec + " message");
      }
    }
    return s;
  }

  /** A claim's tag ({@link Claim#tag()}): empty, or at most {@link Claim#MAX_TAG_LENGTH} characters, no control one. */
  public static String tag(DataInputStream in, String codec) throws IOException {
    String s = in.readUTF();
    if (s.length() > Claim.MAX_TAG_LENGTH || s.chars().anyMatch(Character::isISOControl)) {
      throw new CodecException("tag of " + s.length() + " characters, or with a control character, in " + codec
          + " message (at most " + Claim.MAX_TAG_LENGTH + ")");
    }
    return s;
  }

  /** Refuses bytes left after a whole message. */
  public static void end(DataInputStream in, String codec, int type) throws IOException {
    if (in.available() > 0) {
      throw new CodecException(codec + " message type " + type + " has " + in.available() + " trailing bytes");
    }
  }
}
