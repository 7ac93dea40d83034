package dev.tumbler.peer.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.tumbler.peer.transport.tcp.Frames.Frame;
import dev.tumbler.peer.transport.tcp.Frames.FrameSealer;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.Socket;
import java.util.Arrays;

/**
 * A hand-driven dialer of either listener, speaking the wire format directly: a client (or an impostor) on
 * a member's client listener, or a client id on its peer listener. The proofs it makes take the secret and
 * label as arguments, so a test can make any wrong one.
 */
final class RawClient implements AutoCloseable {
  final Socket socket;
  final DataInputStream in;
  final DataOutputStream out;
  final byte[] nonce = new byte[Frames.NONCE_BYTES];
  String id;
  String dialled;
  byte[] memberNonce;
  byte[] memberProof;

  RawClient(int port) throws IOException {
    socket = new Socket("127.0.0.1", port);
    socket.setTcpNoDelay(true);
    socket.setSoTimeout((int) TcpTestSupport.WAIT.toMillis());
    in = new DataInputStream(socket.getInputStream());
    out = new DataOutputStream(new BufferedOutputStream(socket.getOutputStream()));
    Arrays.fill(nonce, (byte) 9);
  }

  void hello(String id, String dialled) throws IOException {
    this.id = id;
    this.dialled = dialled;
    Frames.write(out, Frames.HELLO, Frames.hello(id, dialled, nonce));
    out.flush();
  }

  Frame read() throws IOException {
    return Frames.read(in, TcpLinkSettings.DEFAULT_MAX_FRAME_SIZE + Frames.TAG_BYTES);
  }

  /** Reads the CHALLENGE (fails on anything else). */
  void readChallenge() throws IOException {
    Frame f = read();
    assertEquals(Frames.CHALLENGE, f.type(), "a CHALLENGE");
    byte[][] c = Frames.parseChallenge(f.body());
    memberNonce = c[0];
    memberProof = c[1];
  }

  /** The proof under {@code secret} and {@code label} over this handshake's ids and nonces. */
  byte[] proof(byte[] secret, String label) {
    return Frames.proof(secret, label, id, dialled, nonce, memberNonce);
  }

  void respond(byte[] proof) throws IOException {
    Frames.write(out, Frames.RESPONSE, proof);
    out.flush();
  }

  /** The REJECT's reason (fails on any other frame). */
  TcpProtocolException.Reason readReject() throws IOException {
    Frame f = read();
    assertEquals(Frames.REJECT, f.type(), "a REJECT frame");
    return TcpProtocolException.Reason.ofCode(f.body()[0]);
  }

  /** The two directions' sealers after an accepted client handshake. */
  record Sealers(FrameSealer toMember, FrameSealer fromMember) {}

  /**
   * A complete, valid client handshake as {@code id} under {@code clientSecret}, checking the member's proof;
   * returns the sealers of both directions.
   */
  Sealers authenticate(String id, String dialled, byte[] clientSecret) throws IOException {
    hello(id, dialled);
    readChallenge();
    assertArrayEquals(proof(clientSecret, Frames.MEMBER_PROOF), memberProof, "the member proves the client secret");
    respond(proof(clientSecret, Frames.CLIENT_PROOF));
    Frame f = read();
    assertEquals(Frames.ACCEPT, f.type(), "an ACCEPT");
    return new Sealers(new FrameSealer(proof(clientSecret, Frames.CLIENT_TO_MEMBER_KEY)),
        new FrameSealer(proof(clientSecret, Frames.MEMBER_TO_CLIENT_KEY)));
  }

  void send(FrameSealer sealer, byte type, byte[] payload) throws IOException {
    Frames.write(out, type, sealer.seal(type, payload));
    out.flush();
  }

  @Override
  public void close() throws IOException {
    socket.close();
  }
}
