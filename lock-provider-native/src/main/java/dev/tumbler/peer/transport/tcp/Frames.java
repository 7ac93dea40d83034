package dev.tumbler.peer.transport.tcp;

import dev.tumbler.peer.transport.tcp.TcpProtocolException.Reason;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.util.Arrays;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * The wire format, written out by hand (never Java serialization).
 *
 * <pre>
 * frame     = length:u32 type:u8 body          length = 1 + |body|, big-endian
 * HELLO     = magic "TMBL" version:u8 dialer:str dialled:str nonce:32      dialer → acceptor
 * CHALLENGE = nonce:32 proof:32                                              acceptor → dialer
 * RESPONSE  = proof:32                                                       dialer → acceptor
 * ACCEPT    = (empty)                                                        acceptor → dialer
 * REJECT    = reason:u8                                                      either way, then close
 * DATA      = payload tag:16                          dialer → acceptor (a client connection: both ways)
 * PING      = tag:16                                  dialer → acceptor (a client connection: both ways)
 * str       = length:u16 UTF-8 bytes (at most 255)
 * </pre>
 *
 * Proofs are HMAC-SHA256 under the shared secret over a direction label, both ids and both nonces; the
 * tag of a DATA or PING frame is HMAC-SHA256, truncated to 16 bytes, under a per-connection session key
 * over the frame's sequence number, type and payload, so that after the handshake nobody can inject,
 * drop, replay or reorder frames on a plain TCP link without the connection closing.
 *
 * <p>A client connection (see {@link TcpTransport}, "Clients") runs the same messages under the clients'
 * secret with labels of its own ({@link #CLIENT_PROOF}, {@link #MEMBER_PROOF}), so that no proof made on
 * one listener verifies on the other even under one key, and it derives one key per direction
 * ({@link #CLIENT_TO_MEMBER_KEY}, {@link #MEMBER_TO_CLIENT_KEY}): both directions number their frames from
 * zero, and under a shared key a frame could be reflected back to its sender.
 */
final class Frames {
  static final byte HELLO = 1;
  static final byte CHALLENGE = 2;
  static final byte RESPONSE = 3;
  static final byte ACCEPT = 4;
  static final byte REJECT = 5;
  static final byte DATA = 16;
  static final byte PING = 17;

  static final byte[] MAGIC = {'T', 'M', 'B', 'L'};
  static final byte VERSION = 1;
  static final int NONCE_BYTES = 32;
  static final int PROOF_BYTES = 32;
  static final int TAG_BYTES = 16;
  /** No handshake frame is longer: an unauthenticated peer cannot make the node allocate more. */
  static final int MAX_HANDSHAKE_FRAME = 1024;
  static final int MAX_ID_BYTES = 255;
  /** The payload of a PING. */
  static final byte[] EMPTY = new byte[0];

  private static final String HMAC = "HmacSHA256";

  private Frames() {}

  /** One frame as read: its type and body. */
  record Frame(byte type, byte[] body) {}

  static void write(DataOutputStream out, byte type, byte[] body) throws IOException {
    out.writeInt(1 + body.length);
    out.writeByte(type);
    out.write(body);
  }

  /**
   * Reads one frame whose body is at most {@code maxBody} bytes; the length is checked before anything
   * is allocated.
   *
   * @throws java.io.EOFException if the stream ends (cleanly before a frame, or inside one)
   * @throws TcpProtocolException for a length that is not positive or is too large
   */
  static Frame read(DataInputStream in, int maxBody) throws IOException {
    int length = in.readInt();
    if (length < 1) {
      throw new TcpProtocolException(Reason.CORRUPT_FRAME, "length " + length);
    }
    if (length - 1 > maxBody) {
      throw new TcpProtocolException(Reason.OVERSIZED_FRAME, (length - 1) + " bytes > limit " + maxBody);
    }
    byte type = in.readByte();
    byte[] body = new byte[length - 1];
    in.readFully(body);
    return new Frame(type, body);
  }

  /**
   * Reads frames sealed by {@code sealer}'s peer until a DATA frame, and returns its payload; a PING is checked and
   * passed over. For the reader of a connection after its handshake.
   *
   * @throws TcpProtocolException for a frame that is too large, has a wrong tag, or has no business after the
   *     handshake
   */
  static byte[] readData(DataInputStream in, FrameSealer sealer, int maxFrameSize) throws IOException {
    while (true) {
      Frame f = read(in, maxFrameSize + TAG_BYTES);
      switch (f.type()) {
        case DATA -> {
          return sealer.open(DATA, f.body());
        }
        case PING -> {
          if (sealer.open(PING, f.body()).length != 0) {
            throw new TcpProtocolException(Reason.CORRUPT_FRAME, "PING with a payload");
          }
        }
        default -> throw new TcpProtocolException(Reason.UNEXPECTED_FRAME, "type " + f.type() + " after the handshake");
      }
    }
  }

  // ---- handshake messages ----

  record Hello(String dialer, String dialled, byte[] nonce) {}

  static byte[] hello(String dialer, String dialled, byte[] nonce) {
    byte[] a = dialer.getBytes(StandardCharsets.UTF_8);
    byte[] b = dialled.getBytes(StandardCharsets.UTF_8);
    ByteBuffer buf = ByteBuffer.allocate(MAGIC.length + 1 + 2 + a.length + 2 + b.length + NONCE_BYTES);
    buf.put(MAGIC).put(VERSION);
    buf.putShort((short) a.length).put(a);
    buf.putShort((short) b.length).put(b);
    buf.put(nonce);
    return buf.array();
  }

  static Hello parseHello(byte[] body) throws TcpProtocolException {
    ByteBuffer buf = ByteBuffer.wrap(body);
    try {
      byte[] magic = new byte[MAGIC.length];
      buf.get(magic);
      if (!Arrays.equals(magic, MAGIC)) {
        throw new TcpProtocolException(Reason.BAD_MAGIC, "");
      }
      byte version = buf.get();
      if (version != VERSION) {
        throw new TcpProtocolException(Reason.VERSION, "peer speaks " + version + ", this node " + VERSION);
      }
      String dialer = string(buf);
      String dialled = string(buf);
      byte[] nonce = bytes(buf, NONCE_BYTES);
      end(buf);
      return new Hello(dialer, dialled, nonce);
    } catch (BufferUnderflowException e) {
      throw new TcpProtocolException(Reason.CORRUPT_FRAME, "truncated HELLO");
    }
  }

  static byte[] challenge(byte[] nonce, byte[] proof) {
    return ByteBuffer.allocate(NONCE_BYTES + PROOF_BYTES).put(nonce).put(proof).array();
  }

  /** [0] = nonce, [1] = proof. */
  static byte[][] parseChallenge(byte[] body) throws TcpProtocolException {
    if (body.length != NONCE_BYTES + PROOF_BYTES) {
      throw new TcpProtocolException(Reason.CORRUPT_FRAME, "CHALLENGE of " + body.length + " bytes");
    }
    return new byte[][] {Arrays.copyOfRange(body, 0, NONCE_BYTES), Arrays.copyOfRange(body, NONCE_BYTES,
        body.length)};
  }

  /**
   * The acceptor's reading of what came back instead of a RESPONSE to its CHALLENGE: a REJECT means the dialer
   * refused the acceptor's proof, which with an honest dialer means that the two do not share the secret (named
   * {@code secretName}); anything else is an unexpected frame.
   */
  static TcpProtocolException notAResponse(Frame f, String dialer, String secretName) {
    if (f.type() == REJECT) {
      Reason said = f.body().length == 1 ? Reason.ofCode(f.body()[0]) : Reason.REJECTED;
      if (said == Reason.BAD_MAC) {
        return new TcpProtocolException(Reason.BAD_MAC, said, "'" + dialer + "' refused this node's proof: its "
            + secretName + " differs from this node's");
      }
      return new TcpProtocolException(Reason.REJECTED, said, "'" + dialer + "' says: " + said.text);
    }
    return new TcpProtocolException(Reason.UNEXPECTED_FRAME, "expected RESPONSE, got type " + f.type());
  }

  static byte[] parseResponse(byte[] body) throws TcpProtocolException {
    if (body.length != PROOF_BYTES) {
      throw new TcpProtocolException(Reason.CORRUPT_FRAME, "RESPONSE of " + body.length + " bytes");
    }
    return body;
  }

  private static String string(ByteBuffer buf) throws TcpProtocolException {
    int n = buf.getShort() & 0xffff;
    if (n == 0 || n > MAX_ID_BYTES) {
      throw new TcpProtocolException(Reason.CORRUPT_FRAME, "peer id of " + n + " bytes");
    }
    return new String(bytes(buf, n), StandardCharsets.UTF_8);
  }

  private static byte[] bytes(ByteBuffer buf, int n) {
    byte[] b = new byte[n];
    buf.get(b);
    return b;
  }

  private static void end(ByteBuffer buf) throws TcpProtocolException {
    if (buf.hasRemaining()) {
      throw new TcpProtocolException(Reason.CORRUPT_FRAME, buf.remaining() + " stray bytes");
    }
  }

  // ---- proofs and keys ----

  static final String DIALER_PROOF = "tumbler/1 dialer proof";
  static final String ACCEPTOR_PROOF = "tumbler/1 acceptor proof";
  static final String SESSION_KEY = "tumbler/1 session key";
  /** A client's proof to the member it dialled (the client is the dialer). */
  static final String CLIENT_PROOF = "tumbler/1 client proof";
  /** A member's proof to a client that dialled its client listener. */
  static final String MEMBER_PROOF = "tumbler/1 member proof to a client";
  static final String CLIENT_TO_MEMBER_KEY = "tumbler/1 client-to-member key";
  static final String MEMBER_TO_CLIENT_KEY = "tumbler/1 member-to-client key";

  /** How every client id starts; no member id (a {@code host:port}) does. */
  static final String CLIENT_ID_PREFIX = "client/";
  private static final java.util.regex.Pattern CLIENT_ID = java.util.regex.Pattern.compile("client/[0-9a-f]{32}");

  /** Whether {@code id} is a client id: {@value #CLIENT_ID_PREFIX} and 32 lowercase hex digits. */
  static boolean isClientId(String id) {
    return CLIENT_ID.matcher(id).matches();
  }

  /**
   * HMAC-SHA256(secret, label | dialer | acceptor | dialer nonce | acceptor nonce), every field length
   * prefixed. The label makes a proof one-directional (a reflected proof fails); both ids bind it to this
   * pair; the nonces make it fresh (a replayed one fails).
   */
  static byte[] proof(byte[] secret, String label, String dialer, String acceptor, byte[] dialerNonce,
      byte[] acceptorNonce) {
    Mac mac = mac(secret);
    for (byte[] part : new byte[][] {label.getBytes(StandardCharsets.UTF_8), dialer.getBytes(StandardCharsets.UTF_8),
        acceptor.getBytes(StandardCharsets.UTF_8), dialerNonce, acceptorNonce}) {
      mac.update(ByteBuffer.allocate(4).putInt(part.length).array());
      mac.update(part);
    }
    return mac.doFinal();
  }

  static boolean sameProof(byte[] expected, byte[] actual) {
    return MessageDigest.isEqual(expected, actual);
  }

  static Mac mac(byte[] key) {
    try {
      Mac mac = Mac.getInstance(HMAC);
      mac.init(new SecretKeySpec(key, HMAC));
      return mac;
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("HmacSHA256 is not available", e);
    }
  }

  /** Tags (and checks tags of) the frames of one direction of one connection. Not thread safe. */
  static final class FrameSealer {
    private final Mac mac;
    private long sequence;

    FrameSealer(byte[] sessionKey) {
      this.mac = mac(sessionKey);
    }

    /**
     * The whole frame of {@code type} carrying {@code payload} sealed: length, type, payload, tag, in one
     * array, as {@link Frames#write} would write {@code seal(type, payload)}.
     */
    byte[] frame(byte type, byte[] payload) {
      byte[] tag = tag(type, payload, 0, payload.length);
      int length = 1 + payload.length + TAG_BYTES;
      byte[] out = new byte[4 + length];
      ByteBuffer.wrap(out).putInt(length).put(type).put(payload).put(tag, 0, TAG_BYTES);
      return out;
    }

    /** {@code payload} followed by its tag. */
    byte[] seal(byte type, byte[] payload) {
      byte[] tag = tag(type, payload, 0, payload.length);
      byte[] out = Arrays.copyOf(payload, payload.length + TAG_BYTES);
      System.arraycopy(tag, 0, out, payload.length, TAG_BYTES);
      return out;
    }

    /** The payload of a sealed body; throws if the tag is wrong. */
    byte[] open(byte type, byte[] body) throws TcpProtocolException {
      if (body.length < TAG_BYTES) {
        throw new TcpProtocolException(Reason.CORRUPT_FRAME, "frame shorter than its tag");
      }
      int n = body.length - TAG_BYTES;
      byte[] expected = tag(type, body, 0, n);
      if (!MessageDigest.isEqual(expected, Arrays.copyOfRange(body, n, body.length))) {
        throw new TcpProtocolException(Reason.BAD_MAC, "frame tag does not match (altered, injected, "
            + "replayed or reordered frame)");
      }
      return Arrays.copyOf(body, n);
    }

    private byte[] tag(byte type, byte[] data, int off, int len) {
      mac.update(ByteBuffer.allocate(9).putLong(sequence++).put(type).array());
      mac.update(data, off, len);
      return Arrays.copyOf(mac.doFinal(), TAG_BYTES);
    }
  }
}
