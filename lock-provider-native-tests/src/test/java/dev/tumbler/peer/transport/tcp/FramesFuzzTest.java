package dev.tumbler.peer.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;
import java.io.ByteArrayInputStream;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;

/**
 * Fuzzes what an unauthenticated peer controls on a TCP link: the frame reader and the handshake messages
 * (HELLO, CHALLENGE, RESPONSE). Without {@code JAZZER_FUZZ} these replay the kept inputs under
 * {@code src/test/resources/.../FramesFuzzTestInputs}; with it they fuzz.
 *
 * <p>Oracles: a byte stream yields frames no larger than the limit and ends with {@link EOFException} or
 * {@link TcpProtocolException}, never another exception and never an allocation the limit does not allow;
 * every handshake body is parsed or refused with {@link TcpProtocolException}; a HELLO this node writes
 * parses back to its fields.
 */
class FramesFuzzTest {
  private static final int LIMIT = 64 * 1024;

  @FuzzTest(maxDuration = "10s", maxExecutions = 100_000)
  void frames(byte[] stream) throws IOException {
    DataInputStream in = new DataInputStream(new ByteArrayInputStream(stream));
    try {
      while (true) {
        Frames.Frame f = Frames.read(in, LIMIT);
        assertTrue(f.body().length <= LIMIT, "a frame over the limit was read");
        handshake(f.body());
      }
    } catch (EOFException | TcpProtocolException end) {
      // the stream ended, or the peer broke the protocol: both typed
    }
  }

  @FuzzTest(maxDuration = "10s", maxExecutions = 100_000)
  void helloRoundTrip(FuzzedDataProvider data) throws TcpProtocolException {
    String dialer = data.consumeString(Frames.MAX_ID_BYTES);
    String dialled = data.consumeString(Frames.MAX_ID_BYTES);
    byte[] nonce = data.consumeBytes(Frames.NONCE_BYTES);
    if (nonce.length != Frames.NONCE_BYTES || !carried(dialer) || !carried(dialled)) {
      return;
    }
    Frames.Hello h = Frames.parseHello(Frames.hello(dialer, dialled, nonce));
    assertEquals(dialer, h.dialer());
    assertEquals(dialled, h.dialled());
    assertArrayEquals(nonce, h.nonce());
  }

  /** An id the HELLO carries as it is: 1 to MAX_ID_BYTES bytes of well-formed UTF-8. */
  private static boolean carried(String id) {
    byte[] b = id.getBytes(StandardCharsets.UTF_8);
    return b.length >= 1 && b.length <= Frames.MAX_ID_BYTES && new String(b, StandardCharsets.UTF_8).equals(id);
  }

  private static void handshake(byte[] body) {
    try {
      Frames.parseHello(body);
    } catch (TcpProtocolException refused) {
      // typed
    }
    try {
      Frames.parseChallenge(body);
    } catch (TcpProtocolException refused) {
      // typed
    }
    try {
      Frames.parseResponse(body);
    } catch (TcpProtocolException refused) {
      // typed
    }
  }
}
