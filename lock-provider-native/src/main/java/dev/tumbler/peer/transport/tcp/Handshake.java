package dev.tumbler.peer.transport.tcp;

import dev.tumbler.peer.transport.tcp.Frames.Frame;
import dev.tumbler.peer.transport.tcp.Frames.Hello;
import dev.tumbler.peer.transport.tcp.TcpProtocolException.Reason;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.security.SecureRandom;

/**
 * The HMAC-SHA256 challenge and response that opens every connection, at either end, under one secret: the dialer
 * sends HELLO (its id, the id it means to reach, its nonce); the acceptor checks the HELLO, answers CHALLENGE (its
 * nonce and its proof); the dialer checks that proof and answers RESPONSE (its own); the acceptor checks it. Proofs
 * cover a direction label, both ids and both nonces, so a reflected, replayed or redirected handshake fails; both
 * ends then derive the connection's keys from the same inputs. An end that finds the other's proof wrong says so
 * with a REJECT ({@code BAD_MAC}) before it closes, so that a wrong secret is named at once on both ends.
 *
 * <p>Peers and thin clients run the same messages; what differs is a {@link Scheme}: the secret's name, the labels
 * (so that no proof made on one listener verifies on the other, even under one key), whether the acceptor writes
 * back (a client connection: a key per direction), and the words of a refusal. Who may dial, and the ACCEPT, are
 * the acceptor's caller's. See {@link Frames} for the bytes.
 *
 * <p>Thread safe; each handshake runs on one thread.
 */
final class Handshake {

  /**
   * What a kind of connection sets in its handshake.
   *
   * @param secretName the secret's parameter, for messages
   * @param dialerProof the label of the dialer's proof
   * @param acceptorProof the label of the acceptor's proof
   * @param toAcceptorKey the label of the key of frames from dialer to acceptor
   * @param toDialerKey the label of the key of frames from acceptor to dialer, or null when the acceptor never
   *     writes after the handshake
   * @param unproven what a dialer says of an acceptor whose proof is wrong, after its id
   * @param unprovenDialer what an acceptor adds when a dialer's proof is wrong
   */
  record Scheme(String secretName, String dialerProof, String acceptorProof, String toAcceptorKey,
      String toDialerKey, String unproven, String unprovenDialer) {}

  /** Between members: each sends on the connection it dialled, under one key. */
  static final Scheme PEERS = new Scheme("secret", Frames.DIALER_PROOF, Frames.ACCEPTOR_PROOF, Frames.SESSION_KEY,
      null, " did not prove the shared secret: its secret differs from this node's", "");
  /** A thin client (the dialer) and a member: frames both ways, a key per direction. */
  static final Scheme CLIENTS = new Scheme("clientSecret", Frames.CLIENT_PROOF, Frames.MEMBER_PROOF,
      Frames.CLIENT_TO_MEMBER_KEY, Frames.MEMBER_TO_CLIENT_KEY,
      " did not prove the client secret: this client's clientSecret differs from the member's",
      " (not the client secret: its clientSecret differs from this member's)");

  /** The keys of one connection; {@code toDialer} is null under a scheme whose acceptor never writes. */
  record Keys(byte[] toAcceptor, byte[] toDialer) {}

  /** A dialer that proved the secret, as its HELLO named it. */
  record Proven(String dialer, Keys keys) {}

  /** The acceptor's check of a HELLO: throws, naming the reason (which the REJECT carries), to refuse it. */
  interface HelloCheck {
    void check(Hello hello) throws TcpProtocolException;
  }

  private final Scheme scheme;
  private final byte[] secret;
  private final SecureRandom nonces = new SecureRandom();

  /** {@code secret} is kept, not copied: the owner's copy. */
  Handshake(Scheme scheme, byte[] secret) {
    this.scheme = scheme;
    this.secret = secret;
  }

  /**
   * The dialer's side, up to and including the ACCEPT: {@code self} dials {@code remote}.
   *
   * @throws TcpProtocolException if the acceptor refused (a REJECT, its reason named), or did not prove the secret,
   *     or broke the protocol
   */
  Keys dial(DataInputStream in, DataOutputStream out, String self, String remote) throws IOException {
    byte[] nonce = nonce();
    Frames.write(out, Frames.HELLO, Frames.hello(self, remote, nonce));
    out.flush();
    Frame c = Frames.read(in, Frames.MAX_HANDSHAKE_FRAME);
    rejected(c, remote);
    if (c.type() != Frames.CHALLENGE) {
      throw new TcpProtocolException(Reason.UNEXPECTED_FRAME, "expected CHALLENGE, got type " + c.type());
    }
    byte[][] ch = Frames.parseChallenge(c.body());
    if (!Frames.sameProof(proof(scheme.acceptorProof(), self, remote, nonce, ch[0]), ch[1])) {
      reject(out, Reason.BAD_MAC); // the acceptor logs that this end refused its proof
      throw new TcpProtocolException(Reason.BAD_MAC, remote + scheme.unproven());
    }
    Frames.write(out, Frames.RESPONSE, proof(scheme.dialerProof(), self, remote, nonce, ch[0]));
    out.flush();
    Frame a = Frames.read(in, Frames.MAX_HANDSHAKE_FRAME);
    rejected(a, remote);
    if (a.type() != Frames.ACCEPT || a.body().length != 0) {
      throw new TcpProtocolException(Reason.UNEXPECTED_FRAME, "expected ACCEPT, got type " + a.type());
    }
    return keys(self, remote, nonce, ch[0]);
  }

  /**
   * The acceptor's side, up to and including the check of the dialer's proof; the caller sends the ACCEPT. What the
   * HELLO says was dialled is the acceptor's id in both proofs ({@code check} may insist that it is this node's).
   *
   * @throws TcpProtocolException if the HELLO is malformed or refused by {@code check}, or the dialer refused this
   *     end's proof or did not prove the secret (a REJECT is sent where it helps the dialer name the problem)
   */
  Proven accept(DataInputStream in, DataOutputStream out, HelloCheck check) throws IOException {
    Frame f = Frames.read(in, Frames.MAX_HANDSHAKE_FRAME);
    if (f.type() != Frames.HELLO) {
      throw new TcpProtocolException(Reason.UNEXPECTED_FRAME, "expected HELLO, got type " + f.type());
    }
    Hello hello;
    try {
      hello = Frames.parseHello(f.body());
    } catch (TcpProtocolException e) {
      if (e.reason() == Reason.VERSION) {
        reject(out, e.reason());
      }
      throw e;
    }
    try {
      check.check(hello);
    } catch (TcpProtocolException e) {
      reject(out, e.reason());
      throw e;
    }
    String dialer = hello.dialer();
    String acceptor = hello.dialled();
    byte[] nonce = nonce();
    byte[] proof = proof(scheme.acceptorProof(), dialer, acceptor, hello.nonce(), nonce);
    Frames.write(out, Frames.CHALLENGE, Frames.challenge(nonce, proof));
    out.flush();
    Frame r = Frames.read(in, Frames.MAX_HANDSHAKE_FRAME);
    if (r.type() != Frames.RESPONSE) {
      throw Frames.notAResponse(r, dialer, scheme.secretName()); // the dialer checks this end's proof first
    }
    byte[] expected = proof(scheme.dialerProof(), dialer, acceptor, hello.nonce(), nonce);
    if (!Frames.sameProof(expected, Frames.parseResponse(r.body()))) {
      reject(out, Reason.BAD_MAC);
      throw new TcpProtocolException(Reason.BAD_MAC, "from '" + dialer + "'" + scheme.unprovenDialer());
    }
    return new Proven(dialer, keys(dialer, acceptor, hello.nonce(), nonce));
  }

  /** Sends a REJECT carrying {@code reason}, best effort: the connection is closed next anyway. */
  static void reject(DataOutputStream out, Reason reason) {
    try {
      Frames.write(out, Frames.REJECT, new byte[] {(byte) reason.code});
      out.flush();
    } catch (IOException e) {
      // best effort
    }
  }

  private static void rejected(Frame f, String remote) throws TcpProtocolException {
    if (f.type() == Frames.REJECT) {
      Reason r = f.body().length == 1 ? Reason.ofCode(f.body()[0]) : Reason.REJECTED;
      throw new TcpProtocolException(Reason.REJECTED, r, remote + " says: " + r.text);
    }
  }

  private Keys keys(String dialer, String acceptor, byte[] dialerNonce, byte[] acceptorNonce) {
    return new Keys(proof(scheme.toAcceptorKey(), dialer, acceptor, dialerNonce, acceptorNonce),
        scheme.toDialerKey() == null ? null : proof(scheme.toDialerKey(), dialer, acceptor, dialerNonce,
            acceptorNonce));
  }

  private byte[] proof(String label, String dialer, String acceptor, byte[] dialerNonce, byte[] acceptorNonce) {
    return Frames.proof(secret, label, dialer, acceptor, dialerNonce, acceptorNonce);
  }

  private byte[] nonce() {
    byte[] n = new byte[Frames.NONCE_BYTES];
    nonces.nextBytes(n);
    return n;
  }
}
