package dev.tumbler.peer.transport.tcp;

import java.io.IOException;

/**
 * A connection broke the wire protocol or failed authentication; the connection is closed and the reason
 * logged. The message never contains the secret or a MAC.
 */
final class TcpProtocolException extends IOException {

  /** Why a connection was refused or closed; also sent to a dialer as the REJECT code. */
  enum Reason {
    CORRUPT_FRAME(1, "corrupt frame"),
    OVERSIZED_FRAME(2, "oversized frame"),
    BAD_MAGIC(3, "not a tumbler peer"),
    VERSION(4, "unsupported protocol version"),
    UNKNOWN_PEER(5, "peer id not in the membership"),
    WRONG_NODE(6, "dialled a different node id"),
    BAD_MAC(7, "authentication failed (secrets differ, or a replayed or reflected handshake)"),
    UNEXPECTED_FRAME(8, "unexpected frame type"),
    TIMEOUT(9, "handshake timed out"),
    REJECTED(10, "rejected by the peer"),
    BAD_CLIENT_ID(11, "not a client id (client/ and 32 lowercase hex digits)"),
    TOO_MANY_CLIENTS(12, "too many clients");

    final int code;
    final String text;

    Reason(int code, String text) {
      this.code = code;
      this.text = text;
    }

    static Reason ofCode(int code) {
      for (Reason r : values()) {
        if (r.code == code) {
          return r;
        }
      }
      return REJECTED;
    }
  }

  private final Reason reason;
  private final Reason said;

  TcpProtocolException(Reason reason, String detail) {
    this(reason, null, detail);
  }

  /** {@code said}: the reason the other end gave in its REJECT, when this is about one. */
  TcpProtocolException(Reason reason, Reason said, String detail) {
    super(reason.text + (detail.isEmpty() ? "" : ": " + detail));
    this.reason = reason;
    this.said = said;
  }

  Reason reason() {
    return reason;
  }

  /**
   * Whether the connection failed because the two ends do not share the secret: this end found the other's proof
   * wrong, or the other end said so of this end's.
   */
  boolean secretsDiffer() {
    return reason == Reason.BAD_MAC || said == Reason.BAD_MAC;
  }
}
